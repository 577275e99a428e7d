package xmlflat

import "testing"

func TestFind(t *testing.T) {
	root, err := Parse(`<s:Envelope xmlns:s="x"><s:Body><a><Fault><faultstring>boom</faultstring></Fault></a><Fault/></s:Body></s:Envelope>`)
	if err != nil {
		t.Fatal(err)
	}
	if f := root.Find("faultstring"); f == nil || f.Text != "boom" {
		t.Errorf("Find(faultstring) = %+v", f)
	}
	if f := root.Find("Fault"); f == nil || len(f.Kids) != 1 {
		t.Errorf("Find(Fault) did not return the first, depth-first match: %+v", f)
	}
	if root.Find("Envelope") != root || root.Find("nope") != nil {
		t.Error("Find misses the root or invents an element")
	}
}
