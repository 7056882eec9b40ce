; Python: definitions, calls, type uses, imports, typed or constructed locals.

(function_definition
  name: (identifier) @name
  return_type: (_)? @returns) @definition.function

(function_definition
  name: (identifier) @name
  parameters: (parameters . [(identifier) @self (typed_parameter (identifier) @self)])) @definition.function

; A static method has no receiver: its first parameter is an argument.
(decorated_definition
  (decorator (identifier) @no_self (#eq? @no_self "staticmethod"))
  definition: (function_definition
    name: (identifier) @name) @definition.function)

(class_definition
  name: (identifier) @name) @definition.class

(class_definition
  name: (identifier) @name
  superclasses: (argument_list [(identifier) (attribute)] @base)) @definition.class

(module
  (expression_statement
    (assignment
      left: (identifier) @name
      type: (_)? @type)) @definition.variable)

(class_definition
  body: (block
    (expression_statement
      (assignment
        left: (identifier) @name
        type: (_)? @type)) @definition.variable))

(call
  function: (identifier) @name) @reference.call

(call
  function: (attribute
    object: (_) @receiver
    attribute: (identifier) @name)) @reference.call

(type (identifier) @name) @reference.type
(type (attribute object: (_) @receiver attribute: (identifier) @name)) @reference.type
(type (generic_type (identifier) @name)) @reference.type
(type (subscript value: (identifier) @name)) @reference.type
(class_definition
  superclasses: (argument_list (identifier) @name) @reference.type)
(class_definition
  superclasses: (argument_list (attribute object: (_) @receiver attribute: (identifier) @name) @reference.type))

(import_statement
  name: (dotted_name) @import.module) @import
(import_statement
  name: (aliased_import
    name: (dotted_name) @import.module
    alias: (identifier) @import.alias)) @import
(import_from_statement
  module_name: (_) @import.module
  name: (dotted_name) @import.name) @import
(import_from_statement
  module_name: (_) @import.module
  name: (aliased_import
    name: (dotted_name) @import.name
    alias: (identifier) @import.alias)) @import
(import_from_statement
  module_name: (_) @import.module
  (wildcard_import) @import.wildcard) @import

(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @name
  right: (call function: [(identifier) (attribute)] @value)) @local
(assignment
  left: [(identifier) (attribute object: (identifier) attribute: (identifier))] @name
  type: (_) @type) @local
(typed_parameter
  (identifier) @name
  type: (_) @type) @local
(typed_default_parameter
  name: (identifier) @name
  type: (_) @type) @local
(with_item
  value: (as_pattern
    (call function: [(identifier) (attribute)] @value)
    alias: (as_pattern_target (identifier) @name))) @local
