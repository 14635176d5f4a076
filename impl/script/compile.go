package script

// The evaluator compiles the syntax tree to a small stack bytecode. Running bytecode from an
// explicit operand stack and frame stack is what lets an evaluation stop at an await and
// continue later without goroutines: the whole state is plain data in the Machine.

type opcode uint8

const (
	opConst      opcode = iota // push consts[a]
	opNil                      // push nil
	opTrue                     // push true
	opFalse                    // push false
	opLoad                     // push the variable names[a]
	opDefine                   // pop a value and bind names[a] in the current scope
	opAssign                   // pop a value, store it in the existing variable names[a], push nil
	opPop                      // drop the top value
	opBinary                   // pop y, x; push x (binaryOp a) y
	opUnary                    // pop x; push (unaryOp a) x
	opJump                     // jump to a
	opJumpFalse                // pop c; if c is an error push it and jump to b; if c is false jump to a
	opAndTest                  // if top is an error or false jump to a keeping it; else pop it
	opOrTest                   // if top is an error or true jump to a keeping it; else pop it
	opArray                    // pop a values; push an array of them
	opRecord                   // pop len(keyLists[a]) values; push a record
	opField                    // pop r; push r.names[a]
	opIndex                    // pop i, r; push r[i]
	opCall                     // call the value below a arguments
	opMethod                   // call method names[a] of the value below b arguments
	opClosure                  // push a function of protos[a] closed over the current scope
	opReturn                   // return the top value from the current function
	opScopeEnter               // open a block scope
	opScopeExit                // close the block scope
	opTryBegin                 // install a handler whose fallback starts at a
	opTryEnd                   // remove the innermost handler
	opUse                      // push the module or function a `use` binds (builtinKind a)
	opHalt                     // end of the top level: the top value is the result
)

type binaryOp int32

const (
	binAdd binaryOp = iota
	binSub
	binMul
	binDiv
	binMod
	binEq
	binNe
	binLt
	binLe
	binGt
	binGe
)

var binaryOps = map[string]binaryOp{
	"+": binAdd, "-": binSub, "*": binMul, "/": binDiv, "%": binMod,
	"==": binEq, "!=": binNe, "<": binLt, "<=": binLe, ">": binGt, ">=": binGe,
}

var binaryNames = [...]string{"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">="}

type unaryOp int32

const (
	unNeg unaryOp = iota
	unPlus
	unNot
)

type instr struct {
	op   opcode
	a, b int32
	pos  Pos
}

type proto struct {
	name       string
	params     []string
	paramNames []int32 // interned params
	code       []instr
}

type program struct {
	consts   []Value
	names    []string
	keyLists [][]string
	protos   []*proto // protos[0] is the top level
}

type compiler struct {
	prog    *program
	nameIdx map[string]int32
	cur     *proto
}

func compile(stmts []stmt) *program {
	c := &compiler{prog: &program{}, nameIdx: map[string]int32{}}
	main := &proto{name: "<top level>"}
	c.prog.protos = append(c.prog.protos, main)
	c.cur = main
	c.statements(stmts, true)
	c.emit(opHalt, 0, 0, Pos{})
	return c.prog
}

func (c *compiler) emit(op opcode, a, b int32, pos Pos) int {
	c.cur.code = append(c.cur.code, instr{op: op, a: a, b: b, pos: pos})
	return len(c.cur.code) - 1
}

func (c *compiler) here() int32 { return int32(len(c.cur.code)) }

func (c *compiler) name(n string) int32 {
	if i, ok := c.nameIdx[n]; ok {
		return i
	}
	i := int32(len(c.prog.names))
	c.prog.names = append(c.prog.names, n)
	c.nameIdx[n] = i
	return i
}

func (c *compiler) constant(v Value) int32 {
	c.prog.consts = append(c.prog.consts, v)
	return int32(len(c.prog.consts) - 1)
}

// statements compiles a statement list; with keepLast the list leaves one value: its last
// expression statement's value, or nil.
func (c *compiler) statements(stmts []stmt, keepLast bool) {
	for i, s := range stmts {
		last := i == len(stmts)-1
		switch s := s.(type) {
		case *exprStmt:
			c.expr(s.x)
			if !(last && keepLast) {
				c.emit(opPop, 0, 0, Pos{})
			}
			continue
		case *useStmt:
			c.emit(opUse, int32(s.module), 0, s.pos)
			c.emit(opDefine, c.name(s.name), 0, s.pos)
		case *letStmt:
			if s.value != nil {
				c.expr(s.value)
			} else {
				c.emit(opNil, 0, 0, s.pos)
			}
			c.emit(opDefine, c.name(s.name), 0, s.pos)
		case *fnStmt:
			body := &proto{name: s.name, params: s.params}
			for _, p := range s.params {
				body.paramNames = append(body.paramNames, c.name(p))
			}
			idx := int32(len(c.prog.protos))
			c.prog.protos = append(c.prog.protos, body)
			outer := c.cur
			c.cur = body
			c.statements(s.body.stmts, true)
			c.emit(opReturn, 0, 0, s.pos)
			c.cur = outer
			c.emit(opClosure, idx, 0, s.pos)
			c.emit(opDefine, c.name(s.name), 0, s.pos)
		case *returnStmt:
			if s.value != nil {
				c.expr(s.value)
			} else {
				c.emit(opNil, 0, 0, s.pos)
			}
			c.emit(opReturn, 0, 0, s.pos)
		}
		if last && keepLast {
			c.emit(opNil, 0, 0, Pos{})
		}
	}
	if len(stmts) == 0 && keepLast {
		c.emit(opNil, 0, 0, Pos{})
	}
}

// blockValue compiles a block used as a value, with its own scope when it declares names.
func (c *compiler) blockValue(b *blockBody) {
	scoped := false
	for _, s := range b.stmts {
		switch s.(type) {
		case *useStmt, *letStmt, *fnStmt:
			scoped = true
		}
	}
	if scoped {
		c.emit(opScopeEnter, 0, 0, Pos{})
	}
	c.statements(b.stmts, true)
	if scoped {
		c.emit(opScopeExit, 0, 0, Pos{})
	}
}

func (c *compiler) branch(b branch) {
	if b.block != nil {
		c.blockValue(b.block)
		return
	}
	c.expr(b.x)
}

func (c *compiler) expr(e expr) {
	switch e := e.(type) {
	case *numberLit:
		c.emit(opConst, c.constant(Number(e.val)), 0, e.pos)
	case *stringLit:
		c.emit(opConst, c.constant(String(e.val)), 0, e.pos)
	case *boolLit:
		if e.val {
			c.emit(opTrue, 0, 0, e.pos)
		} else {
			c.emit(opFalse, 0, 0, e.pos)
		}
	case *nilLit:
		c.emit(opNil, 0, 0, e.pos)
	case *ident:
		c.emit(opLoad, c.name(e.name), 0, e.pos)
	case *arrayLit:
		for _, x := range e.elems {
			c.expr(x)
		}
		c.emit(opArray, int32(len(e.elems)), 0, e.pos)
	case *recordLit:
		for _, x := range e.values {
			c.expr(x)
		}
		c.prog.keyLists = append(c.prog.keyLists, e.names)
		c.emit(opRecord, int32(len(c.prog.keyLists)-1), 0, e.pos)
	case *unaryExpr:
		c.expr(e.x)
		op := unNeg
		switch e.op {
		case "+":
			op = unPlus
		case "!":
			op = unNot
		}
		c.emit(opUnary, int32(op), 0, e.pos)
	case *binaryExpr:
		c.expr(e.x)
		c.expr(e.y)
		c.emit(opBinary, int32(binaryOps[e.op]), 0, e.pos)
	case *logicalExpr:
		c.expr(e.x)
		op := opOrTest
		if e.and {
			op = opAndTest
		}
		j := c.emit(op, 0, 0, e.pos)
		c.expr(e.y)
		c.cur.code[j].a = c.here()
	case *assignExpr:
		if e.op == "=" {
			c.expr(e.value)
		} else {
			c.emit(opLoad, c.name(e.name), 0, e.pos)
			c.expr(e.value)
			c.emit(opBinary, int32(binaryOps[e.op[:1]]), 0, e.pos)
		}
		c.emit(opAssign, c.name(e.name), 0, e.pos)
	case *callExpr:
		c.expr(e.callee)
		for _, x := range e.args {
			c.expr(x)
		}
		c.emit(opCall, int32(len(e.args)), 0, e.pos)
	case *methodExpr:
		c.expr(e.recv)
		for _, x := range e.args {
			c.expr(x)
		}
		c.emit(opMethod, c.name(e.name), int32(len(e.args)), e.pos)
	case *fieldExpr:
		c.expr(e.recv)
		c.emit(opField, c.name(e.name), 0, e.pos)
	case *indexExpr:
		c.expr(e.recv)
		c.expr(e.idx)
		c.emit(opIndex, 0, 0, e.pos)
	case *ifExpr:
		var ends, falses []int
		for i, cond := range e.conds {
			c.expr(cond)
			jf := c.emit(opJumpFalse, 0, 0, cond.exprPos())
			falses = append(falses, jf)
			c.branch(e.bodies[i])
			ends = append(ends, c.emit(opJump, 0, 0, Pos{}))
			c.cur.code[jf].a = c.here()
		}
		if e.orElse != nil {
			c.branch(*e.orElse)
		} else {
			c.emit(opNil, 0, 0, e.pos)
		}
		end := c.here()
		for _, j := range ends {
			c.cur.code[j].a = end
		}
		for _, j := range falses {
			c.cur.code[j].b = end
		}
	case *tryExpr:
		tb := c.emit(opTryBegin, 0, 0, e.pos)
		c.branch(e.protected)
		c.emit(opTryEnd, 0, 0, e.pos)
		j := c.emit(opJump, 0, 0, Pos{})
		c.cur.code[tb].a = c.here()
		c.branch(e.fallback)
		c.cur.code[j].a = c.here()
	}
}
