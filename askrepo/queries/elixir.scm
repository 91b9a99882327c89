; askrepo chunking query for Elixir (see askrepo/chunker.py for the capture names).
; Elixir definitions are macro calls: defmodule Foo do ... end, def bar(x) do ... end.

(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#any-of? @_kw "defmodule" "defprotocol")) @definition.class

; defimpl Proto, for: Type do ... end qualifies its functions by the protocol.
(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defimpl")) @definition.impl

; def name(args), def name, def name(args) when guard
(call
  target: (identifier) @_kw
  (arguments . [
    (call target: (identifier) @name)
    (identifier) @name
    (binary_operator left: (call target: (identifier) @name))
    (binary_operator left: (identifier) @name)
  ])
  (#any-of? @_kw "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp" "defdelegate" "defn" "defnp")) @definition.function

(comment) @doc
; @doc, @spec, @impl, @deprecated above a function belong to it.
(unary_operator
  operand: (call target: (identifier) @_attr)
  (#any-of? @_attr "doc" "spec" "impl" "deprecated" "typedoc")) @doc

(call
  target: (identifier) @call
  (#not-match? @call "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defmodule|defprotocol|defimpl|defstruct|defexception|alias|import|require|use|quote|unquote|doc|moduledoc|typedoc|spec|impl|deprecated|type|typep|opaque|callback|behaviour)$"))
(call target: (dot right: (identifier) @call))
