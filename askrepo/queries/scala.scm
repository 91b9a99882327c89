; askrepo chunking query for Scala (see askrepo/chunker.py for the capture names).

(class_definition name: (identifier) @name) @definition.class
(object_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.class
(enum_definition name: (identifier) @name) @definition.class

; Only definitions with a body: abstract declarations stay in their type's header chunk.
(function_definition name: (identifier) @name) @definition.function

(comment) @doc
(block_comment) @doc
(annotation) @doc

(call_expression function: (identifier) @call)
(call_expression function: (field_expression field: (identifier) @call))
