; C#: namespaces, types and their bases, methods, constructors, properties, fields, calls,
; `new`, `using`, typed locals and parameters.

(namespace_declaration name: (_) @name) @package
(file_scoped_namespace_declaration name: (_) @name) @package
(namespace_declaration name: (_) @name) @definition.module

(class_declaration name: (identifier) @name) @definition.class
(class_declaration name: (identifier) @name (base_list (_) @base)) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(interface_declaration name: (identifier) @name (base_list (_) @base)) @definition.interface
(struct_declaration name: (identifier) @name) @definition.struct
(record_declaration name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(delegate_declaration name: (identifier) @name) @definition.type_alias
(method_declaration returns: (_) @returns name: (identifier) @name) @definition.method
(local_function_statement type: (_) @returns name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.method
(property_declaration type: (_) @type name: (identifier) @name) @definition.field
(field_declaration (variable_declaration type: (_) @type (variable_declarator name: (identifier) @name))) @definition.field

(invocation_expression function: (identifier) @name) @reference.call
(invocation_expression function: (generic_name (identifier) @name)) @reference.call
(invocation_expression
  function: (member_access_expression
    expression: (_) @receiver
    name: [(identifier) (generic_name (identifier))] @name)) @reference.call
(object_creation_expression type: (identifier) @name) @reference.call
(object_creation_expression type: (generic_name (identifier) @name)) @reference.call
(base_list (identifier) @name) @reference.type
(parameter type: (identifier) @name) @reference.type
(variable_declaration type: (identifier) @name) @reference.type

(using_directive [(qualified_name) (identifier)] @import.module) @import
(using_directive name: (identifier) @import.alias (_) @import.module) @import

(local_declaration_statement (variable_declaration type: (_) @type (variable_declarator name: (identifier) @name))) @local
(parameter type: (_) @type name: (identifier) @name) @local
