package pixsim_test

import (
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// specErrata corrects the places where the 2.9 document contradicts
// itself so that no answer (nor its own examples) could satisfy it; each
// correction says why.
func specErrata(doc *openapi3.T) error {
	for _, e := range errata {
		if err := e.fix(doc.Components.Schemas); err != nil {
			return fmt.Errorf("erratum %q: %w (another version of the document?)", e.why, err)
		}
	}
	// CPF and codMun patterns are written as JavaScript literals
	// ("/^\d{11}$/"), which as regular expressions demand the slashes.
	visitSchemas(doc, func(s *openapi3.Schema) {
		if p := s.Pattern; len(p) > 2 && strings.HasPrefix(p, "/") && strings.HasSuffix(p, "/") {
			s.Pattern = p[1 : len(p)-1]
		}
	})
	return nil
}

type erratum struct {
	why string
	fix func(openapi3.Schemas) error
}

var errata = []erratum{
	{"RecBase requires retentativa, which no schema defines (politicaRetentativa is required by RecConfiguracao), " +
		"and idRec, which the PSP makes: the body of POST /rec (RecSolicitada) cannot carry it",
		func(s openapi3.Schemas) error {
			return withSchema(s, "RecBase", func(x *openapi3.Schema) { x.Required = without(x.Required, "retentativa", "idRec") })
		}},
	{"DadosPagadorRec puts required ispbParticipante and the CPF/CNPJ oneOf beside pagador instead of inside it, " +
		"which would demand those fields at the top of every recurrence",
		func(s openapi3.Schemas) error {
			return withSchema(s, "DadosPagadorRec", func(x *openapi3.Schema) {
				if p := x.Properties["pagador"]; p != nil && p.Value != nil {
					inner := *p.Value
					inner.Required, inner.OneOf = x.Required, x.OneOf
					x.Properties["pagador"] = openapi3.NewSchemaRef("", &inner)
					x.Required, x.OneOf = nil, nil
				}
			})
		}},
	{"SolicRecBase requires pagador (the payer's account is destinatario)",
		func(s openapi3.Schemas) error {
			return withSchema(s, "SolicRecBase", func(x *openapi3.Schema) { x.Required = without(x.Required, "pagador") })
		}},
	{"SolicRecCompleta requires rec (the field is recPayload)",
		func(s openapi3.Schemas) error {
			return withSchema(s, "SolicRecCompleta", func(x *openapi3.Schema) { x.Required = append(without(x.Required, "rec"), "recPayload") })
		}},
	{`RecNotification requires atualizacao" (a stray quote)`,
		func(s openapi3.Schemas) error {
			return withSchema(s, "RecNotification", func(x *openapi3.Schema) {
				x.Required = append(without(x.Required, `atualizacao"`), "atualizacao")
			})
		}},
	{"the encerramento oneOf of a recurrence and of a recurring charge offers {rejeicao} or {cancelamento} with neither " +
		"required, so every object matches both and the oneOf cannot hold",
		func(s openapi3.Schemas) error {
			for _, name := range []string{"RecEncerramento", "CobRAtualizacao"} {
				if err := withSchema(s, name, func(x *openapi3.Schema) {
					if enc := x.Properties["encerramento"]; enc != nil && enc.Value != nil {
						for _, alt := range enc.Value.OneOf {
							for prop := range alt.Value.Properties {
								alt.Value.Required = []string{prop}
							}
						}
					}
				}); err != nil {
					return err
				}
			}
			return nil
		}},
	{"RecRevisada's vinculo.devedor is a oneOf of two identical schemas, which no value matches exactly once",
		func(s openapi3.Schemas) error {
			return withSchema(s, "RecRevisada", func(x *openapi3.Schema) {
				for _, part := range x.AllOf {
					if v := part.Value.Properties["vinculo"]; v != nil && v.Value.Properties["devedor"] != nil {
						d := v.Value.Properties["devedor"].Value
						d.AnyOf, d.OneOf = d.OneOf, nil
					}
				}
			})
		}},
	{"PixAutomatico.valor is a string that must also match one of several objects (the components of the amount, " +
		"which the Pix schema puts under componentesValor)",
		func(s openapi3.Schemas) error {
			return withSchema(s, "PixAutomatico", func(x *openapi3.Schema) {
				if v := x.Properties["valor"]; v != nil && v.Value != nil {
					v.Value.AnyOf = nil
				}
			})
		}},
}

func withSchema(s openapi3.Schemas, name string, f func(*openapi3.Schema)) error {
	ref := s[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("no schema %s", name)
	}
	f(ref.Value)
	return nil
}

// without is list without names.
func without(list []string, names ...string) []string {
	var out []string
	for _, r := range list {
		if !slices.Contains(names, r) {
			out = append(out, r)
		}
	}
	return out
}
