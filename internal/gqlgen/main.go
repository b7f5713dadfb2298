// Command gqlgen runs this repository's generators from the module's root,
// where gqlgen.yml is (`go generate ./...` calls it): first the enums of
// package upstream (internal/enumgen, from the schema's enums), then
// gqlgen's generator, whose autobind binds the schema to them, with this
// repository's plugins added (internal/fastexec, internal/assetrefs).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen/config"

	"github.com/tradenet/gateway/internal/assetrefs"
	"github.com/tradenet/gateway/internal/enumgen"
	"github.com/tradenet/gateway/internal/fastexec"
)

func main() {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen: loading gqlgen.yml:", err)
		os.Exit(2)
	}
	if err := generateEnums(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen: enums:", err)
		os.Exit(3)
	}
	plugins := []api.Option{
		api.AddPlugin(fastexec.New("graph/fastexec_gen.go")),
		api.AddPlugin(assetrefs.New("graph/assetrefs_gen.go", "Asset", "loadAsset")),
	}
	if err := api.Generate(cfg, plugins...); err != nil {
		fmt.Fprintln(os.Stderr, "gqlgen:", err)
		os.Exit(3)
	}
}

// generateEnums writes upstream/enums_gen.go: every enum of the schema
// that gqlgen.yml does not bind to a model of its own.
func generateEnums(cfg *config.Config) error {
	if err := cfg.LoadSchema(); err != nil {
		return err
	}
	bound := func(name string) bool { return cfg.Models.Exists(name) }
	return enumgen.Write(cfg.Schema, bound, "upstream", strings.Join(cfg.SchemaFilename, ", "), "upstream/enums_gen.go")
}
