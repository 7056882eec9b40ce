; JavaScript only: class bases and fields.
(class_declaration
  name: (_) @name
  (class_heritage (_) @base)) @definition.class
(field_definition
  property: (property_identifier) @name) @definition.field
; A callback's parameter (`operate((source, subscriber) => …)`): typed by the function type
; the callee declares for that argument, when it is declared (the extractor records where).
(arrow_function
  parameter: (identifier) @name @local)
(arrow_function
  parameters: (formal_parameters
    (identifier) @name @local))
(function_expression
  parameters: (formal_parameters
    (identifier) @name @local))
