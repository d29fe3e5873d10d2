package qr

import (
	"container/list"
	"sync"
)

// lru is a fixed-size, least-recently-used map from payload to PNG. A
// single mutex is enough: each operation is a map look-up and a list move,
// far cheaper than the render it saves.
type lru struct {
	limit int

	mu    sync.Mutex
	order *list.List // of *lruEntry, most recently used first
	items map[string]*list.Element
}

type lruEntry struct {
	key string
	png []byte
}

func newLRU(limit int) *lru {
	return &lru{limit: limit, order: list.New(), items: make(map[string]*list.Element, limit)}
}

func (c *lru) get(key string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruEntry).png, true
}

func (c *lru) add(key string, png []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		el.Value.(*lruEntry).png = png
		c.order.MoveToFront(el)
		return
	}
	c.items[key] = c.order.PushFront(&lruEntry{key: key, png: png})
	for c.order.Len() > c.limit {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.items, oldest.Value.(*lruEntry).key)
	}
}

func (c *lru) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
