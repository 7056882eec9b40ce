; Ruby: classes, modules, methods, constants, calls, require_relative / require,
; `Foo.new` locals.

(class name: [(constant) (scope_resolution)] @name) @definition.class
(class
  name: [(constant) (scope_resolution)] @name
  superclass: (superclass (_) @base)) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.method
(assignment left: (constant) @name) @definition.constant

(call method: (identifier) @name) @reference.call
(call receiver: (_) @receiver method: (identifier) @name) @reference.call
(call receiver: (constant) @name method: (identifier) @_new (#eq? @_new "new")) @reference.type

(call
  method: (identifier) @import.name
  arguments: (argument_list (string (string_content) @import.module))
  (#any-of? @import.name "require" "require_relative")) @import

(assignment
  left: [(identifier) (instance_variable)] @name
  right: (call receiver: [(constant) (scope_resolution)] @value method: (identifier) @_new)
  (#eq? @_new "new")) @local
