; askrepo chunking query for Haskell (see askrepo/chunker.py for the capture names).

(data_type name: (name) @name) @definition.class
(newtype name: (name) @name) @definition.class
(type_synomym name: (name) @name) @definition.class
(type_family name: (name) @name) @definition.class
(class name: (name) @name) @definition.class

; instance Functor Parser where fmap = ... -> Parser.fmap (method), like a Rust impl block.
(instance patterns: (type_patterns . (name) @name)) @definition.impl

; Each equation of a function is a definition (multi-clause functions give several chunks).
(function name: (variable) @name) @definition.function
(bind name: (variable) @name) @definition.function

(comment) @doc
(haddock) @doc
(pragma) @doc
; A top-level type signature belongs to the function under it.
(declarations (signature) @doc)

(apply function: (variable) @call)
(apply function: (qualified (variable) @call))
