package script

// Syntax tree of the supported subset. Every node records the position its diagnostics use.

type expr interface{ exprPos() Pos }

type stmt interface{ stmtPos() Pos }

type (
	numberLit struct {
		pos Pos
		val float64
	}
	stringLit struct {
		pos Pos
		val string
	}
	boolLit struct {
		pos Pos
		val bool
	}
	nilLit struct{ pos Pos }
	ident  struct {
		pos  Pos
		name string
	}
	arrayLit struct {
		pos   Pos
		elems []expr
	}
	recordLit struct {
		pos    Pos
		names  []string
		values []expr
	}
	unaryExpr struct {
		pos Pos // the operator
		op  string
		x   expr
	}
	binaryExpr struct {
		pos  Pos // the operator
		op   string
		x, y expr
	}
	// logicalExpr is && or ||: it yields the deciding operand.
	logicalExpr struct {
		pos  Pos
		and  bool
		x, y expr
	}
	assignExpr struct {
		pos   Pos // the operator
		name  string
		op    string // "=", "+=", …
		value expr
	}
	callExpr struct {
		pos    Pos // the callee's start
		callee expr
		args   []expr
	}
	methodExpr struct {
		pos  Pos // the method name
		recv expr
		name string
		args []expr
	}
	fieldExpr struct {
		pos  Pos // the field name
		recv expr
		name string
	}
	indexExpr struct {
		pos  Pos // the `[`
		recv expr
		idx  expr
	}
	// branch is an if/try branch: a block, or a single expression when block is nil.
	branch struct {
		block *blockBody
		x     expr
	}
	ifExpr struct {
		pos    Pos
		conds  []expr
		bodies []branch
		orElse *branch
	}
	tryExpr struct {
		pos       Pos
		protected branch
		fallback  branch
	}
)

// blockBody is the statements of a `{ … }` block.
type blockBody struct {
	stmts []stmt
}

type (
	useStmt struct {
		pos    Pos
		name   string // the bound name: the last path segment
		module builtinKind
	}
	letStmt struct {
		pos   Pos
		name  string
		value expr // nil for `let x`
	}
	fnStmt struct {
		pos    Pos
		name   string
		params []string
		body   *blockBody
	}
	returnStmt struct {
		pos   Pos
		value expr // nil for a bare return
	}
	exprStmt struct {
		x expr
	}
)

func (n *numberLit) exprPos() Pos  { return n.pos }
func (n *stringLit) exprPos() Pos  { return n.pos }
func (n *boolLit) exprPos() Pos    { return n.pos }
func (n *nilLit) exprPos() Pos     { return n.pos }
func (n *ident) exprPos() Pos      { return n.pos }
func (n *arrayLit) exprPos() Pos   { return n.pos }
func (n *recordLit) exprPos() Pos  { return n.pos }
func (n *unaryExpr) exprPos() Pos  { return n.pos }
func (n *binaryExpr) exprPos() Pos { return n.pos }
func (n *logicalExpr) exprPos() Pos {
	return n.pos
}
func (n *assignExpr) exprPos() Pos { return n.pos }
func (n *callExpr) exprPos() Pos   { return n.pos }
func (n *methodExpr) exprPos() Pos { return n.pos }
func (n *fieldExpr) exprPos() Pos  { return n.pos }
func (n *indexExpr) exprPos() Pos  { return n.pos }
func (n *ifExpr) exprPos() Pos     { return n.pos }
func (n *tryExpr) exprPos() Pos    { return n.pos }

func (s *useStmt) stmtPos() Pos    { return s.pos }
func (s *letStmt) stmtPos() Pos    { return s.pos }
func (s *fnStmt) stmtPos() Pos     { return s.pos }
func (s *returnStmt) stmtPos() Pos { return s.pos }
func (s *exprStmt) stmtPos() Pos   { return s.x.exprPos() }
