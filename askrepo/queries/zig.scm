; askrepo chunking query for Zig (see askrepo/chunker.py for the capture names).

; A function returning `type` is a generic container: fn ArrayList(T) type { return struct {..} }
; Its inner functions become methods (ArrayList.append). Listed before the plain function
; pattern so it wins for the same node.
(Decl
  (FnProto function: (IDENTIFIER) @name (ErrorUnionExpr (SuffixExpr (BuildinTypeExpr) @_ret)))
  (Block)
  (#eq? @_ret "type")) @definition.class

(Decl (FnProto function: (IDENTIFIER) @name) (Block)) @definition.function

; const Point = struct { ... }; also enum, union, opaque
(Decl
  (VarDecl
    variable_type_function: (IDENTIFIER) @name
    (ErrorUnionExpr (SuffixExpr (ContainerDecl))))) @definition.class

(doc_comment) @doc
(line_comment) @doc

(SuffixExpr variable_type_function: (IDENTIFIER) @call . (FnCallArguments))
(FieldOrFnCall function_call: (IDENTIFIER) @call)
