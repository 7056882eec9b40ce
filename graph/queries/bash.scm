; Bash: functions, commands that call them, `source` / `.`.

(function_definition name: (word) @name) @definition.function
(command name: (command_name (word) @name)) @reference.call
(command
  name: (command_name (word) @_cmd)
  argument: (word) @import.module
  (#any-of? @_cmd "source" ".")) @import
