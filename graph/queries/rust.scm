; Rust: items, impl owners, calls (methods, paths, macros), types, `use` trees, typed locals.

(function_item
  name: (identifier) @name
  return_type: (_)? @returns) @definition.function
(function_signature_item
  name: (identifier) @name
  return_type: (_)? @returns) @definition.function
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name type: (_) @type) @definition.type_alias
(mod_item name: (identifier) @name) @definition.module
(const_item name: (identifier) @name type: (_) @type) @definition.constant
(static_item name: (identifier) @name type: (_) @type) @definition.variable
(macro_definition name: (identifier) @name) @definition.macro
(field_declaration name: (field_identifier) @name type: (_) @type) @definition.field

(impl_item trait: (_)? @trait type: (_) @owner) @scope.owner

(call_expression
  function: (identifier) @name) @reference.call
(call_expression
  function: (field_expression
    value: (_) @receiver
    field: (field_identifier) @name)) @reference.call
(call_expression
  function: (scoped_identifier
    path: (_) @receiver
    name: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: (identifier) @name)) @reference.call
(call_expression
  function: (generic_function
    function: (scoped_identifier
      path: (_) @receiver
      name: (identifier) @name))) @reference.call
(call_expression
  function: (generic_function
    function: (field_expression
      value: (_) @receiver
      field: (field_identifier) @name))) @reference.call
(macro_invocation
  macro: (identifier) @name) @reference.macro

(type_identifier) @name @reference.type
(scoped_type_identifier
  path: (_) @receiver
  name: (type_identifier) @name) @reference.type

(use_declaration
  argument: (identifier) @import.module) @import
(use_declaration
  argument: (scoped_identifier
    path: (_) @import.module
    name: (_) @import.name)) @import
(use_declaration
  argument: (use_as_clause
    path: (scoped_identifier
      path: (_) @import.module
      name: (_) @import.name)
    alias: (identifier) @import.alias)) @import
(use_declaration
  argument: (use_as_clause
    path: (identifier) @import.module
    alias: (identifier) @import.alias)) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list [(identifier) (scoped_identifier) (self)] @import.name))) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list
      (use_as_clause
        path: (_) @import.name
        alias: (identifier) @import.alias)))) @import
(use_declaration
  argument: (use_wildcard
    (_) @import.module) @import.wildcard) @import
(use_declaration
  argument: (scoped_use_list
    path: (_) @import.module
    list: (use_list (use_wildcard (_) @import.name) @import.wildcard))) @import

(let_declaration
  pattern: (identifier) @name
  type: (_) @type) @local
(let_declaration
  pattern: (identifier) @name
  value: (call_expression function: (_) @value)) @local
(let_declaration
  pattern: (identifier) @name
  value: (struct_expression name: (_) @type)) @local
(parameter
  pattern: (identifier) @name
  type: (_) @type) @local
