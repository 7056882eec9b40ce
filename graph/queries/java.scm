; Java: package, types and their bases, methods, constructors, fields, calls, `new`, imports,
; typed locals and parameters.

(package_declaration [(scoped_identifier) (identifier)] @name) @package

(class_declaration name: (identifier) @name) @definition.class
(class_declaration name: (identifier) @name superclass: (superclass (_) @base)) @definition.class
(class_declaration name: (identifier) @name interfaces: (super_interfaces (type_list (_) @base))) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(record_declaration name: (identifier) @name) @definition.class
(annotation_type_declaration name: (identifier) @name) @definition.interface
(method_declaration type: (_) @returns name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration type: (_) @type declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration type: (_) @type declarator: (variable_declarator name: (identifier) @name)) @definition.constant

(method_invocation name: (identifier) @name) @reference.call
(method_invocation object: (_) @receiver name: (identifier) @name) @reference.call
(object_creation_expression type: (type_identifier) @name) @reference.call
(object_creation_expression type: (generic_type (type_identifier) @name)) @reference.call
(type_identifier) @name @reference.type

(import_declaration (scoped_identifier) @import.module) @import
(import_declaration (scoped_identifier) @import.module (asterisk) @import.wildcard) @import

(local_variable_declaration type: (_) @type declarator: (variable_declarator name: (identifier) @name)) @local
(formal_parameter type: (_) @type name: (identifier) @name) @local
