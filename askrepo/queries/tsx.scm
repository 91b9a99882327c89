; inherits: typescript
; askrepo chunking query for TSX: the TypeScript query applies unchanged.
