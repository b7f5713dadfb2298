package upstream

import "sync"

// Derived holds what the callers sharing one upstream answer compute from
// it. Identical requests in flight at the same moment share one answer
// (coalesce.go), and each caller's page is a copy of the same decoded
// page; what every caller would compute from it alike (the gateway's
// signed cursors of a data-node page) is computed by the first and read
// by the others. A Derived lives as long as the pages that share it: it
// is made for one flight, so answers served from the cache, which a
// flight did not fetch for this moment, get none and compute their own
// (the cache's byte budget counts the answers it keeps, not what is
// derived from them).
type Derived struct {
	mu    sync.Mutex
	cells map[any]*derivedCell
}

// derivedCell is one derived value, made once.
type derivedCell struct {
	once sync.Once
	v    any
}

// value returns what make computes under key, made once for every caller
// of d: the first caller makes it, the others wait for it. A nil d makes
// it for this caller alone. What make returns is shared: neither it nor
// the callers may change it. If make panics, the panic goes on up in the
// caller that ran it and the others get nil.
func (d *Derived) value(key any, make func() any) any {
	if d == nil {
		return make()
	}
	d.mu.Lock()
	c := d.cells[key]
	if c == nil {
		if d.cells == nil {
			d.cells = map[any]*derivedCell{}
		}
		c = &derivedCell{}
		d.cells[key] = c
	}
	d.mu.Unlock()
	c.once.Do(func() { c.v = make() })
	return c.v
}

// Derive returns what make computes from the page under key (comparable),
// computed once for every caller sharing the page's upstream answer in
// flight, and by this caller alone otherwise. The key must name
// everything the value depends on besides the page; the value is shared
// and read-only. Nil when make panicked in another caller.
func (p *Page[T]) Derive(key any, make func() any) any {
	return p.derived.value(key, make)
}
