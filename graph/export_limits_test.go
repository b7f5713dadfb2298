package graph

import "strings"

// DeepestPathQuery is a query of the schema's deepest path of one list
// (SchemaDepth fields deep).
func DeepestPathQuery() string {
	s := NewExecutableSchema(Config{}).Schema()
	path := deepestPath(s)
	var args []string
	for _, a := range s.Query.Fields.ForName(path[0].field).Arguments {
		if a.Type.NonNull {
			args = append(args, a.Name+`: "`+strings.Repeat("a1", 32)+`"`)
		}
	}
	return pathQuery(path, strings.Join(args, ", "))
}

// FullPageQueries are, per root list, a page of 1000 rows with every
// ordinary field selected.
func FullPageQueries() map[string]string { return fullPageQueries() }
