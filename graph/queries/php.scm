; PHP: the namespace, classes, interfaces, traits and enums with their bases, functions,
; methods (static ones have no receiver), properties, calls (functions, `$x->m()`,
; `Class::m()`, `new`), `use` imports and typed parameters.

(namespace_definition name: (namespace_name) @name) @package

(class_declaration name: (name) @name) @definition.class
(class_declaration name: (name) @name (base_clause [(name) (qualified_name)] @base)) @definition.class
(class_declaration name: (name) @name (class_interface_clause [(name) (qualified_name)] @base)) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(interface_declaration name: (name) @name (base_clause [(name) (qualified_name)] @base)) @definition.interface
(trait_declaration name: (name) @name) @definition.interface
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(method_declaration (static_modifier) @no_self name: (name) @name) @definition.method
(property_declaration (property_element (variable_name (name) @name))) @definition.field

(function_call_expression function: (name) @name) @reference.call
(function_call_expression function: (qualified_name (name) @name)) @reference.call
(member_call_expression object: (variable_name (name) @receiver) name: (name) @name) @reference.call
(nullsafe_member_call_expression object: (variable_name (name) @receiver) name: (name) @name) @reference.call
(member_call_expression
  object: [(member_access_expression) (member_call_expression) (function_call_expression)
           (scoped_call_expression) (parenthesized_expression) (object_creation_expression)
           (subscript_expression)] @receiver
  name: (name) @name) @reference.call
(scoped_call_expression scope: [(relative_scope) (name) (qualified_name)] @receiver name: (name) @name) @reference.call
(object_creation_expression (name) @name) @reference.call
(object_creation_expression (qualified_name (name) @name)) @reference.call
(named_type (name) @name) @reference.type
(named_type (qualified_name (name) @name)) @reference.type

(namespace_use_clause (qualified_name) @import.module) @import
(namespace_use_clause (qualified_name) @import.module alias: (name) @import.alias) @import
(namespace_use_clause (name) @import.module) @import

(simple_parameter type: (_) @type name: (variable_name (name) @name)) @local
