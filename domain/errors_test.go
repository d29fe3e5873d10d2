package domain_test

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// The message names fields only through the adapter's names, so two wire
// formats can spell the same error differently without rewriting text.
func TestValidationErrorMessageNamesFieldsAsTheCallerSays(t *testing.T) {
	t.Parallel()
	err := domain.NewValidationError(domain.FieldCustomerName, domain.CodeParameterMissing,
		"%s is required when %s is set (%d)", domain.FieldCustomerName, domain.FieldExpectedPayer, 7)
	upper := func(f domain.Field) string { return strings.ToUpper(string(f)) }
	if got, want := err.Message(upper), "CUSTOMER NAME is required when EXPECTED PAYER TAX ID is set (7)"; got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	if got, want := err.Error(), "customer name: customer name is required when expected payer tax id is set (7)"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	if !errors.Is(err, domain.ErrValidation) || errors.Is(err, domain.ErrUnknownEvent) {
		t.Errorf("errors.Is: validation %v, unknown event %v; want true, false",
			errors.Is(err, domain.ErrValidation), errors.Is(err, domain.ErrUnknownEvent))
	}
	if m := domain.Missing(domain.FieldEvents); m.Code != domain.CodeParameterMissing || m.Message(upper) != "WEBHOOK EVENTS is required" {
		t.Errorf("Missing = %+v, %q", m, m.Message(upper))
	}
}

// An unknown event names the list element and unwraps to ErrUnknownEvent,
// so an adapter can point at its catalog without parsing text.
func TestValidateEventsNamesTheUnknownElement(t *testing.T) {
	t.Parallel()
	_, err := domain.ValidateEvents([]string{"charge.paid", "charge.paid", "nope"})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, domain.ErrUnknownEvent) || !errors.Is(err, domain.ErrValidation) {
		t.Fatalf("err = %v, want a ValidationError wrapping ErrUnknownEvent", err)
	}
	if ve.Field != domain.FieldEvents || !ve.Indexed || ve.Index != 2 || ve.Code != domain.CodeParameterInvalid {
		t.Errorf("error = %+v, want events element 2, parameter_invalid", ve)
	}
	if got := ve.Message(func(f domain.Field) string { return string(f) }); got != `unknown event "nope"` {
		t.Errorf("message %q", got)
	}
}

// Adapters prove their name tables complete against domain.Fields, so a
// Field constant left out of it would reach the wire untranslated.
func TestFieldsListsEveryField(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "field.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				declared[n.Name] = true
			}
		}
	}
	listed := map[domain.Field]bool{}
	for _, f := range domain.Fields {
		if listed[f] {
			t.Errorf("%q listed twice", f)
		}
		listed[f] = true
	}
	if len(declared) != len(listed) {
		t.Errorf("field.go declares %d Field constants, Fields lists %d", len(declared), len(listed))
	}
}
