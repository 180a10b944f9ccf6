package tir

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The lexer, tirLexer, is in lexer.go.

// fileAST is a whole .tir file: its meshes, then its functions in order.
type fileAST struct {
	Replicas *replicasAST `parser:"@@?"`
	Meshes   []*meshAST   `parser:"@@*"`
	Funcs    []*funcAST   `parser:"@@*"`
}

// replicasAST is replicas = 4: how many replicas of the program run.
type replicasAST struct {
	Pos   lexer.Position
	Count *numberTok `parser:"'replicas' '=' @@"`
}

// meshAST is mesh @name = <["dp"=2, "tp"=2]>.
type meshAST struct {
	Pos  lexer.Position
	Name *globalTok     `parser:"'mesh' @@ '=' '<' '['"`
	Axes []*meshAxisAST `parser:"(@@ (',' @@)*)? ']' '>'"`
}

type meshAxisAST struct {
	Pos  lexer.Position
	Name string     `parser:"@String '='"`
	Size *numberTok `parser:"@@"`
}

// shardingAST is <@mesh, [{"dp"}, {}]>: for each dimension, the mesh axes
// that split it.
type shardingAST struct {
	Pos  lexer.Position
	Mesh *globalTok    `parser:"'<' @@ ',' '['"`
	Dims []*dimAxesAST `parser:"(@@ (',' @@)*)? ']' '>'"`
}

type dimAxesAST struct {
	Axes []string `parser:"'{' (@String (',' @String)*)? '}'"`
}

// annotationAST is {sharding=<...>} after a parameter's or result's type.
// The lookahead tells it from a function body's '{', which a statement
// (never an identifier and '=') follows.
type annotationAST struct {
	Sharding *shardingAST `parser:"(?= '{' 'sharding' '=') '{' 'sharding' '=' @@ '}'"`
}

// resultAST is a result type with its optional sharding.
type resultAST struct {
	Type       *typeAST       `parser:"@@"`
	Annotation *annotationAST `parser:"@@?"`
}

// funcAST is func @name(%a: T, ...) -> T { stmts }. Results holds one type
// for "-> T" and the list for "-> (T, ...)".
type funcAST struct {
	Pos     lexer.Position
	Name    *globalTok   `parser:"'func' @@"`
	Params  []*paramAST  `parser:"'(' (@@ (',' @@)*)? ')'"`
	Results []*resultAST `parser:"Arrow ( '(' (@@ (',' @@)*)? ')' | @@ )"`
	Body    []*stmtAST   `parser:"'{' @@*"`
	End     bool         `parser:"@'}'"`
}

type paramAST struct {
	Name       *valueTok      `parser:"@@ ':'"`
	Type       *typeAST       `parser:"@@"`
	Annotation *annotationAST `parser:"@@?"`
}

// typeAST is DTYPE[d0,...] with an optional layout in XLA's spelling.
type typeAST struct {
	Pos    lexer.Position
	DType  *identTok  `parser:"@@ '['"`
	Dims   []*dimAST  `parser:"(@@ (',' @@)*)? ']'"`
	Layout *layoutAST `parser:"@@?"`
}

// dimAST is a static size (checked later: it may be negative or huge) or a symbol.
type dimAST struct {
	Pos lexer.Position
	Num string `parser:"  @Number"`
	Sym string `parser:"| @Ident"`
}

// layoutAST is {m2m...:T(a,b)(c,d)}. XLA writes T once before all tiles; a T
// before every tile is accepted too. The lookahead tells a layout after a
// function's result type from the body's '{' (which a statement, never a
// number, ':' or '}', follows in a valid program).
type layoutAST struct {
	Pos   lexer.Position
	Minor []*numberTok `parser:"(?= '{' (Number | ':' | '}')) '{' (@@ (',' @@)*)?"`
	Tiles []*tileAST   `parser:"(':' 'T' @@ ('T'? @@)*)? '}'"`
}

type tileAST struct {
	Pos  lexer.Position
	Dims []*numberTok `parser:"'(' (@@ (',' @@)*)? ')'"`
}

// stmtAST is one instruction: [%r, ... =] op operands [{attrs}] [: types].
// The operands are values, a callee with arguments (call) or a literal
// (constant); which form fits which op is checked when building, so the
// messages can name the op.
type stmtAST struct {
	Pos     lexer.Position
	Results []*valueTok  `parser:"(@@ (',' @@)* '=')?"`
	Op      *identTok    `parser:"(?! 'func') @@"`
	Call    *callAST     `parser:"(  @@"`
	Const   *constAST    `parser:" | @@"`
	Args    []*valueTok  `parser:" | @@ (',' @@)* )?"`
	Attrs   *attrsAST    `parser:"@@?"`
	Types   []*typeAST   `parser:"(':' @@ (',' @@)*)?"`
	Regions []*regionAST `parser:"@@*"`
}

// regionAST is a region: (%p: T, ...) { stmts }, labelled cond or do in a
// while. A statement never starts with '(', so an unlabelled region is told
// from the next statement without lookahead; a label is taken only when a
// '(' follows it.
type regionAST struct {
	Pos    lexer.Position
	Label  *identTok   `parser:"((?= ('cond' | 'do') '(') @@)?"`
	Params []*paramAST `parser:"'(' (@@ (',' @@)*)? ')'"`
	Body   []*stmtAST  `parser:"'{' @@*"`
	End    bool        `parser:"@'}'"`
}

type callAST struct {
	Callee *globalTok  `parser:"@@ '('"`
	Args   []*valueTok `parser:"(@@ (',' @@)*)? ')'"`
}

type attrsAST struct {
	Fields []*attrAST `parser:"'{' (@@ (',' @@)*)? '}'"`
}

type attrAST struct {
	Name  *identTok     `parser:"@@ '='"`
	Value *attrValueAST `parser:"@@"`
}

// attrValueAST is an attribute value: a number, string, bare word, list or sharding.
type attrValueAST struct {
	Pos      lexer.Position
	Sharding *shardingAST    `parser:"(  @@"`
	List     bool            `parser:" | @'['"`
	Elems    []*attrValueAST `parser:"   (@@ (',' @@)*)? ']'"`
	Scalar   string          `parser:" | @(Number | String | '-' ('inf' | 'nan') | Ident | Global) )"`
}

// constAST is a constant's literal: a scalar, a complex element (re, im) or
// a nested list. Bare words other than true, false, inf and nan are not
// literals, so that a missing literal cannot swallow the next statement. A
// pair is told from a region's parameter list, which also opens with '(',
// by the number after the '('.
type constAST struct {
	Pos    lexer.Position
	List   bool        `parser:"(  @'['"`
	Elems  []*constAST `parser:"   (@@ (',' @@)*)? ']'"`
	Pair   []*constAST `parser:" | (?= '(' (Number | '-' | 'inf' | 'nan')) '(' @@ ',' @@ ')'"`
	Scalar string      `parser:" | @(Number | '-' ('inf' | 'nan') | 'inf' | 'nan' | 'true' | 'false') )"`
}

// Tokens that the builder needs with their positions. (A lexer.Token field
// would receive the first raw token of the capture, which may be elided
// whitespace.)
type (
	identTok struct {
		Pos   lexer.Position
		Value string `parser:"@Ident"`
	}
	valueTok struct {
		Pos   lexer.Position
		Value string `parser:"@Value"`
	}
	globalTok struct {
		Pos   lexer.Position
		Value string `parser:"@Global"`
	}
	numberTok struct {
		Pos   lexer.Position
		Value string `parser:"@Number"`
	}
)

// tirParser uses no lookahead: a branch that consumed a token and then
// failed is an error right there, so a message points at the mistake
// ("expected a value" after a trailing comma) rather than at an outer '}'
// that backtracking would reach. The one ambiguity, layout or body after a
// result type, is settled by layoutAST's explicit lookahead.
var tirParser = participle.MustBuild[fileAST](
	participle.Lexer(tirLexer),
	participle.Elide("Comment", "Whitespace"),
	participle.UseLookahead(0),
)
