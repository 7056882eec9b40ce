; C (and the C part of C++): functions and prototypes, types, macros, fields, globals, calls,
; includes, typed locals and parameters.

(function_definition
  type: (_)? @returns
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  type: (_)? @returns
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(declaration
  type: (_)? @returns
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(declaration
  type: (_)? @returns
  declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
(type_definition type: (_) @type declarator: (type_identifier) @name) @definition.type_alias
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.function
(field_declaration type: (_) @type declarator: (field_identifier) @name) @definition.field
(field_declaration type: (_) @type declarator: (pointer_declarator declarator: (field_identifier) @name)) @definition.field
(enumerator name: (identifier) @name) @definition.constant
(translation_unit
  (declaration type: (_) @type declarator: (identifier) @name) @definition.variable)
(translation_unit
  (declaration type: (_) @type declarator: (init_declarator declarator: (identifier) @name)) @definition.variable)

(call_expression
  function: (identifier) @name) @reference.call
(call_expression
  function: (field_expression
    argument: (_) @receiver
    field: (field_identifier) @name)) @reference.call
(type_identifier) @name @reference.type

(preproc_include path: (string_literal) @import.module) @import
(preproc_include path: (system_lib_string) @import.module) @import

(declaration type: (_) @type declarator: (identifier) @name) @local
(declaration type: (_) @type declarator: (init_declarator declarator: (identifier) @name)) @local
(declaration type: (_) @type declarator: (pointer_declarator declarator: (identifier) @name)) @local
(declaration type: (_) @type declarator: (init_declarator declarator: (pointer_declarator declarator: (identifier) @name))) @local
(parameter_declaration type: (_) @type declarator: (identifier) @name) @local
(parameter_declaration type: (_) @type declarator: (pointer_declarator declarator: (identifier) @name)) @local
