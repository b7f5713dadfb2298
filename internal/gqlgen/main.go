// Command gqlgen runs gqlgen's generator with this repository's plugin
// (internal/fastexec) added: `go generate ./...` calls it from the module's
// root, where gqlgen.yml is.
package main

import (
	"fmt"
	"os"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/tradenet/gateway/internal/fastexec"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen: loading gqlgen.yml:", err)
		os.Exit(2)
	}
	if err := api.Generate(cfg, api.AddPlugin(fastexec.New("graph/fastexec_gen.go"))); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(3)
	}
}
