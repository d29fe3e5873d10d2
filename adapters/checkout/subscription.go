package checkout

import (
	"bytes"
	"context"
	"errors"
	"html/template"
	"net/http"
	"strconv"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// SubscriptionSource reads the hosted page of a QR-journey subscription
// (Pix Automático). *app.SubscriptionService implements it.
type SubscriptionSource interface {
	// PageView returns the payer's view; ports.ErrNotFound for an unknown
	// raw id or a subscription without a QR code.
	PageView(ctx context.Context, rawID string) (app.SubscriptionPageView, error)
}

var _ SubscriptionSource = (*app.SubscriptionService)(nil)

var subscriptionTmpl = template.Must(template.New("subscription.html").Funcs(template.FuncMap{"assetURL": assetURL}).
	ParseFS(assetFS, "assets/subscription.html"))

// subscriptionText is the page's own words in one language.
type subscriptionText struct {
	AuthorizeTo, Scan, QRAlt, CopyPaste, Until            string
	Every                                                 map[domain.Interval]string
	Variable, VariableUpTo, First, Starts, Ends, Contract string
	Title                                                 string
	States                                                map[domain.SubscriptionStatus]stateText
}

var subscriptionCatalog = map[string]*subscriptionText{
	LangPortuguese: {
		AuthorizeTo: "Pix Automático para", Scan: "Escaneie no app do seu banco para autorizar",
		QRAlt: "QR Code do Pix Automático", CopyPaste: "Pix Copia e Cola", Until: "Autorize até",
		Every: map[domain.Interval]string{domain.IntervalWeekly: "por semana", domain.IntervalMonthly: "por mês",
			domain.IntervalQuarterly: "por trimestre", domain.IntervalSemiannual: "por semestre", domain.IntervalYearly: "por ano"},
		Variable: "Valor variável", VariableUpTo: "Valor variável, até", First: "Pagamento agora", Starts: "Primeira cobrança",
		Ends: "Última cobrança até", Contract: "Contrato", Title: "Autorize o Pix Automático",
		States: map[domain.SubscriptionStatus]stateText{
			domain.SubscriptionActive:    {"Autorizado", "As cobranças serão debitadas automaticamente nas datas combinadas."},
			domain.SubscriptionRejected:  {"Autorização recusada", "Nenhuma cobrança será feita."},
			domain.SubscriptionExpired:   {"Prazo encerrado", "A autorização não foi dada a tempo. Nenhuma cobrança será feita."},
			domain.SubscriptionCancelled: {"Cancelado", "Nenhuma nova cobrança será feita."},
			domain.SubscriptionCompleted: {"Concluído", "Todas as cobranças foram feitas."},
		},
	},
	LangEnglish: {
		AuthorizeTo: "Pix Automático for", Scan: "Scan it in your bank's app to authorize",
		QRAlt: "Pix Automático QR code", CopyPaste: "Pix copy and paste", Until: "Authorize by",
		Every: map[domain.Interval]string{domain.IntervalWeekly: "a week", domain.IntervalMonthly: "a month",
			domain.IntervalQuarterly: "a quarter", domain.IntervalSemiannual: "every six months", domain.IntervalYearly: "a year"},
		Variable: "Variable amount", VariableUpTo: "Variable amount, up to", First: "Paid now", Starts: "First charge",
		Ends: "Last charge by", Contract: "Contract", Title: "Authorize Pix Automático",
		States: map[domain.SubscriptionStatus]stateText{
			domain.SubscriptionActive:    {"Authorized", "Charges will be debited automatically on the agreed dates."},
			domain.SubscriptionRejected:  {"Authorization refused", "No charge will be made."},
			domain.SubscriptionExpired:   {"Time is up", "The authorization was not given in time. No charge will be made."},
			domain.SubscriptionCancelled: {"Cancelled", "No new charge will be made."},
			domain.SubscriptionCompleted: {"Completed", "Every charge was made."},
		},
	},
}

type subscriptionLine struct{ Label, Value string }

type subscriptionPage struct {
	RawID, Merchant, Initial   string
	S                          *subscriptionText
	Title, Amount, Description string
	Lines                      []subscriptionLine
	Status                     string
	Pending, TestMode          bool
	BRCode                     string
	ExpiresISO, ExpiresText    string
	StateTitle, StateBody      string
}

// subscriptionPageData is the template's data (T is the shared messages).
type subscriptionPageData struct {
	subscriptionPage
	T *messages
}

// subscriptionRoutes registers the hosted page of a QR-journey
// subscription at {checkout_url_base}/sub/{id}: the QR code to scan and
// what the mandate authorises, or what became of it.
func (c *Controller) subscriptionRoutes(r *mux.Router) {
	if c.subs != nil {
		r.HandleFunc("/sub/{id}", c.subscription).Methods(http.MethodGet, http.MethodHead).Name("checkout.subscription")
	}
}

func (c *Controller) subscription(w http.ResponseWriter, r *http.Request) {
	raw := mux.Vars(r)["id"]
	if !domain.ValidRawID(raw) {
		c.notFound(w, r)
		return
	}
	v, err := c.subs.PageView(r.Context(), raw)
	if errors.Is(err, ports.ErrNotFound) {
		c.notFound(w, r)
		return
	}
	lang := language(r)
	if err != nil {
		c.log.ErrorContext(r.Context(), "subscription page", "err", err)
		c.render(w, r, http.StatusInternalServerError, "", c.errorData(lang, "error"))
		return
	}
	t, st := catalog[lang], subscriptionCatalog[lang]
	d := subscriptionPageData{T: t, subscriptionPage: subscriptionPage{RawID: raw, Merchant: v.MerchantName, Initial: initial(v.MerchantName),
		S: st, Status: string(v.Status), Pending: v.Status == domain.SubscriptionPendingAuthorization, TestMode: v.TestMode,
		BRCode: v.BRCode, Description: v.Description, ExpiresISO: v.ExpiresAt.UTC().Format(domain.TimestampLayout),
		ExpiresText: v.ExpiresAt.In(brasilia).Format("02/01/2006 15:04")}}
	switch {
	case v.Amount > 0:
		d.Amount = FormatAmount(v.Amount, string(domain.CurrencyBRL), lang) + " " + st.Every[v.Interval]
	case v.MaxAmount > 0:
		d.Amount = st.VariableUpTo + " " + FormatAmount(v.MaxAmount, string(domain.CurrencyBRL), lang) + " " + st.Every[v.Interval]
	default:
		d.Amount = st.Variable + " " + st.Every[v.Interval]
	}
	if v.FirstPayment > 0 {
		d.Lines = append(d.Lines, subscriptionLine{st.First, FormatAmount(v.FirstPayment, string(domain.CurrencyBRL), lang)})
	}
	d.Lines = append(d.Lines, subscriptionLine{st.Starts, dateText(v.StartDate.String(), lang)})
	if !v.EndDate.IsZero() {
		d.Lines = append(d.Lines, subscriptionLine{st.Ends, dateText(v.EndDate.String(), lang)})
	}
	d.Lines = append(d.Lines, subscriptionLine{st.Contract, v.Contract})
	d.Title = st.Title + " · " + v.MerchantName
	if s, ok := st.States[v.Status]; ok && !d.Pending {
		d.StateTitle, d.StateBody = s.Title, s.Body
		d.Title = s.Title + " · " + v.MerchantName
	}
	buf := new(bytes.Buffer)
	if err := subscriptionTmpl.Execute(buf, d); err != nil {
		c.log.ErrorContext(r.Context(), "subscription page render", "err", err)
		c.render(w, r, http.StatusInternalServerError, "", c.errorData(lang, "error"))
		return
	}
	h := w.Header()
	securityHeaders(h, "")
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Accept-Language")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// dateText writes a YYYY-MM-DD date as the payer reads it: DD/MM/YYYY in
// Portuguese, as is in English.
func dateText(iso, lang string) string {
	if lang == LangPortuguese && len(iso) == 10 {
		return iso[8:10] + "/" + iso[5:7] + "/" + iso[0:4]
	}
	return iso
}
