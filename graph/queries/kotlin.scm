; Kotlin: package, classes, objects and their supertypes, functions, properties, calls,
; imports, typed or constructed locals.

(package_header (qualified_identifier) @name) @package

(class_declaration name: (identifier) @name) @definition.class
(class_declaration
  name: (identifier) @name
  (delegation_specifiers
    (delegation_specifier [(user_type) (constructor_invocation (user_type))] @base))) @definition.class
(object_declaration name: (identifier) @name) @definition.class
(companion_object name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name (user_type) @returns) @definition.function
(type_alias type: (identifier) @name) @definition.type_alias
(class_body
  (property_declaration
    (variable_declaration (identifier) @name (user_type)? @type)) @definition.field)
(source_file
  (property_declaration
    (variable_declaration (identifier) @name (user_type)? @type)) @definition.variable)
(class_parameter (identifier) @name (user_type) @type) @definition.field

(call_expression . (identifier) @name) @reference.call
(call_expression
  . (navigation_expression
    . (_) @receiver
    (identifier) @name .)) @reference.call
(user_type (identifier) @name) @reference.type

(import (qualified_identifier) @import.module) @import
(import (qualified_identifier) @import.module "*" @import.wildcard) @import

(property_declaration
  (variable_declaration (identifier) @name (user_type) @type)) @local
(property_declaration
  (variable_declaration (identifier) @name)
  (call_expression . [(identifier) (navigation_expression)] @value)) @local
(parameter (identifier) @name (user_type) @type) @local
