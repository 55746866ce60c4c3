package store

// The table's physical schema. template.yaml declares the same names; a test
// (pkg/deploy) parses the template and fails if the two differ.
const (
	AttrPK       = "pk"
	AttrSK       = "sk"
	AttrTTL      = "ttl" // epoch seconds; the table's TimeToLiveSpecification
	AttrKind     = "kind"
	AttrData     = "data"
	AttrVersion  = "v"
	AttrCount    = "n"
	AttrCountAt  = "nat"
	AttrGSI1PK   = "gsi1pk"
	AttrGSI1SK   = "gsi1sk"
	AttrGSI2PK   = "gsi2pk"
	AttrGSI2SK   = "gsi2sk"
	IndexName1   = "gsi1"
	IndexName2   = "gsi2"
	DefaultTable = "agentgate"
)

// IndexSchema describes one global secondary index.
type IndexSchema struct {
	Name string
	PK   string
	SK   string
}

// Indexes lists the table's GSIs, each projecting all attributes.
var Indexes = []IndexSchema{
	{Name: IndexName1, PK: AttrGSI1PK, SK: AttrGSI1SK},
	{Name: IndexName2, PK: AttrGSI2PK, SK: AttrGSI2SK},
}
