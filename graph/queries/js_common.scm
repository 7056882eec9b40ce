; JavaScript and TypeScript (both grammars): functions, classes, methods, calls, imports,
; re-exports, constructed locals.

(function_declaration
  name: (identifier) @name) @definition.function
(generator_function_declaration
  name: (identifier) @name) @definition.function
(class_declaration
  name: (_) @name) @definition.class
(method_definition
  name: (_) @name) @definition.method
; An object literal's member whose value is a function (`{ next: (v) => … }`): a method of
; the literal (addressable; a call through the interface it is passed as may run it).
; An arrow function has no `this` of its own (`@no_self`): a `this` in it is the enclosing one.
(pair
  key: (property_identifier) @name
  value: [(arrow_function) @no_self (function_expression)]) @definition.method
; A function assigned to a member of a prototype (`Foo.prototype.m = function …`): Foo's method.
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (identifier) @owner
      property: (property_identifier) @_prototype)
    property: (property_identifier) @name)
  right: [(arrow_function) @no_self (function_expression)]
  (#eq? @_prototype "prototype")) @definition.method
; A function assigned to a member of another object (`inst.regex = (...args) => …`,
; `socket.onerror = (e) => …`, `exports.f = function …`): addressable; the extractor decides
; what it belongs to from `@member_of`.
(assignment_expression
  left: (member_expression
    object: (_) @member_of
    property: (property_identifier) @name)
  right: [(arrow_function) @no_self (function_expression)]) @definition.method
(augmented_assignment_expression
  left: (member_expression
    object: (_) @member_of
    property: (property_identifier) @name)
  right: [(arrow_function) @no_self (function_expression)]) @definition.method
; A function assigned to a declared variable (`let f: () => T; … f = () => …`).
(assignment_expression
  left: (identifier) @name
  right: [(arrow_function) (function_expression)]) @definition.function
; An anonymous default export (`export default function () {…}`): named `default`, as its
; importers' `import x from` takes it.
(export_statement
  "default" @name
  value: [(arrow_function) (function_expression)] @definition.function)
(export_statement
  "default" @name
  declaration: (function_declaration !name) @definition.function)
; A named function expression (`createErrorClass((_super) => function AjaxErrorImpl(…) {…})`);
; one that is a declarator's, a member's or an assignment's value is that definition already.
(function_expression
  name: (identifier) @name) @definition.function @named_expression

(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name
      value: [(arrow_function) (function_expression)]) @definition.function))
(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name
        value: [(arrow_function) (function_expression)]) @definition.function)))
(program
  (lexical_declaration
    (variable_declarator
      name: (identifier) @name) @definition.variable))
(program
  (export_statement
    declaration: (lexical_declaration
      (variable_declarator
        name: (identifier) @name) @definition.variable)))
(program
  (variable_declaration
    (variable_declarator
      name: (identifier) @name) @definition.variable))

(call_expression
  function: (identifier) @name) @reference.call
(call_expression
  function: (member_expression
    object: (_) @receiver
    property: (_) @name)) @reference.call
(new_expression
  constructor: (identifier) @name) @reference.call
(new_expression
  constructor: (member_expression
    object: (_) @receiver
    property: (_) @name)) @reference.call

(import_statement
  (import_clause
    (identifier) @import.name @import.alias)
  source: (string) @import.module) @import
(import_statement
  (import_clause
    (named_imports
      (import_specifier
        name: (_) @import.name
        alias: (_)? @import.alias)))
  source: (string) @import.module) @import
(import_statement
  (import_clause
    (namespace_import (identifier) @import.alias))
  source: (string) @import.module) @import
(export_statement
  "*" @import.wildcard
  source: (string) @import.module) @import
(export_statement
  (namespace_export (identifier) @import.alias)
  source: (string) @import.module) @import
(export_statement
  (export_clause
    (export_specifier
      name: (_) @import.name
      alias: (_)? @import.alias))
  source: (string) @import.module) @import

(variable_declarator
  name: (identifier) @name
  value: (new_expression constructor: (_) @value)) @local
(variable_declarator
  name: (identifier) @name
  value: (call_expression function: (_) @value)) @local
(variable_declarator
  name: (identifier) @name
  value: (member_expression) @read) @local
(assignment_expression
  left: (member_expression object: (this) property: (property_identifier)) @name
  right: (new_expression constructor: (_) @value)) @local
