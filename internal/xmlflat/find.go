package xmlflat

// Find returns the first element whose local name is name in n's subtree,
// n included, depth first; nil when there is none.
func (n *Node) Find(name string) *Node {
	if n.Name == name {
		return n
	}
	for _, k := range n.Kids {
		if f := k.Find(name); f != nil {
			return f
		}
	}
	return nil
}
