; JavaScript only: class bases and fields.
(class_declaration
  name: (_) @name
  (class_heritage (_) @base)) @definition.class
(field_definition
  property: (property_identifier) @name) @definition.field
