; C++ only: classes, namespaces, methods declared in classes and defined outside them,
; qualified calls, `new`.

(class_specifier name: (type_identifier) @name body: (_)) @definition.class
(class_specifier name: (type_identifier) @name (base_class_clause (type_identifier) @base)) @definition.class
(struct_specifier name: (type_identifier) @name (base_class_clause (type_identifier) @base)) @definition.struct
(namespace_definition name: (_) @name) @definition.module
(function_definition
  declarator: (function_declarator
    declarator: (qualified_identifier
      scope: (_) @owner
      name: (identifier) @name))) @definition.method
(function_definition
  declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(field_declaration
  declarator: (function_declarator declarator: (field_identifier) @name)) @definition.method
(alias_declaration name: (type_identifier) @name type: (_) @type) @definition.type_alias

(call_expression
  function: (qualified_identifier
    scope: (_) @receiver
    name: (identifier) @name)) @reference.call
(new_expression type: (type_identifier) @name) @reference.call
