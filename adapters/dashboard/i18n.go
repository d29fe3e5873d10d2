package dashboard

import "net/http"

// Languages of the dashboard, as BCP 47 tags for <html lang>. Brazilian
// Portuguese is the default; English is one click away (a cookie keeps
// the choice).
const (
	langPT = "pt-BR"
	langEN = "en"
)

func langOf(r *http.Request) string {
	if ck, err := r.Cookie(langCookie); err == nil && ck.Value == langEN {
		return langEN
	}
	return langPT
}

// msgs is every string of the request's language.
func (c *Controller) msgs(r *http.Request) map[string]string { return messages[langOf(r)] }

// messages holds every string the dashboard shows, per language. The
// tests check that both languages have every key the templates and
// handlers use.
var messages = map[string]map[string]string{
	langPT: {
		"skip": "Pular para o conteúdo", "account": "Conta", "nav_label": "Seções do painel",
		"nav_overview": "Visão geral", "nav_charges": "Cobranças", "nav_charge": "Cobrança", "nav_refunds": "Devoluções", "nav_payouts": "Saques",
		"po_pending": "Pendente", "po_processing": "Enviando", "po_paid": "Pago", "po_failed": "Falhou", "po_cancelled": "Cancelado",
		"po_destination": "Destino", "po_fee": "Tarifa", "po_empty": "Nenhum saque ainda.", "po_cancel": "Cancelar",
		"po_cancel_confirm": "Cancelar este saque? O valor volta ao saldo disponível.", "po_receipt": "Comprovante",
		"po_hint":               "Saques são pedidos pela API (POST /v1/payouts); só os pendentes podem ser cancelados.",
		"done_payout_cancelled": "Saque cancelado.", "err_payout_not_cancellable": "Este saque já foi enviado e não pode ser cancelado.",
		"nav_webhooks": "Webhooks", "nav_keys": "Chaves de API", "nav_logs": "Logs de requisições", "nav_login": "Entrar",
		"nav_secret": "Segredo", "nav_error": "Erro",
		"logout": "Sair", "logout_all": "Sair de todos os dispositivos", "mode_test": "Modo de teste", "mode_enter_test": "Ativar o modo de teste",
		"mode_leave_test": "Sair do modo de teste e voltar ao modo real",
		"test_banner":     "Modo de teste: cobranças, chaves e webhooks daqui não movimentam dinheiro de verdade.",
		"back_home":       "Voltar ao painel", "pager": "Paginação", "first_page": "Primeira página",
		"next_page": "Próxima página", "prev_page": "Página anterior", "copy": "Copiar", "copied": "Copiado!",

		"login_title": "Entrar no painel", "login_intro": "Use o e-mail e a senha da sua conta Quita.",
		"login_email": "E-mail", "login_password": "Senha", "login_submit": "Entrar",
		"login_invalid":   "E-mail ou senha incorretos.",
		"login_missing":   "Informe o e-mail e a senha.",
		"login_throttled": "Muitas tentativas. Aguarde um pouco e tente de novo.",

		"ov_balance": "Saldo", "ov_available": "Disponível", "ov_available_hint": "Pode ser sacado agora",
		"ov_pending": "A liberar", "ov_pending_hint": "Pagamentos em período de retenção",
		"ov_next_release": "Próxima liberação", "ov_no_release": "Nada a liberar",
		"ov_volume": "Volume", "ov_today": "Hoje", "ov_30d": "Últimos 30 dias", "ov_paid_of": "pagas de",
		"ov_success": "taxa de sucesso", "ov_ticket": "Ticket médio", "ov_ticket_hint": "Últimos 30 dias",
		"ov_chart": "Volume pago por dia (30 dias)", "ov_chart_empty": "Nenhum pagamento nos últimos 30 dias.",
		"ov_chart_hint": "Maior dia:", "ov_recent": "Cobranças recentes", "ov_see_all": "Ver todas",

		"ch_search": "Buscar por id da cobrança ou txid", "ch_search_go": "Buscar", "ch_status": "Status",
		"ch_all": "Todos", "ch_from": "De", "ch_to": "Até", "ch_filter": "Filtrar", "ch_clear": "Limpar filtros",
		"ch_empty":   "Nenhuma cobrança encontrada.",
		"col_amount": "Valor", "col_status": "Status", "col_id": "Id", "col_customer": "Cliente", "col_created": "Criada em",
		"col_refund": "Devolução", "col_charge": "Cobrança", "col_event": "Evento", "col_actions": "Ações",

		"cd_refunded": "devolvido", "cd_receipt": "Baixar comprovante", "cd_refund_receipt": "comprovante de devolução", "cd_details": "Detalhes",
		"cd_expires": "Expira em", "cd_paid_at": "Paga em", "cd_method": "Meio de pagamento",
		"cd_e2e": "Id fim a fim (E2E)", "cd_payer": "Pagador", "cd_net": "Valor líquido",
		"cd_refund": "Devolver", "cd_refund_amount": "Valor a devolver", "cd_refund_max": "Máximo:",
		"cd_refund_reason": "Motivo (opcional)", "cd_refund_button": "Devolver pagamento",
		"cd_refund_confirm": "Devolver este valor ao pagador? Não é possível desfazer.",
		"cd_not_refundable": "Só cobranças pagas e com saldo a devolver podem ser devolvidas.",
		"cd_timeline":       "Linha do tempo: eventos e entregas de webhook",
		"cd_no_events":      "Nenhum evento ainda.",
		"rf_empty":          "Nenhuma devolução ainda.",
		"rf_PENDING":        "Pendente", "rf_IN_PROGRESS": "Em andamento", "rf_REFUNDED": "Devolvida", "rf_FAILED": "Falhou",
		"rf_devolution": "devolução do Pix original ao pagador", "rf_cashout_payer": "Pix para o documento do pagador",
		"rf_cashout_key": "Pix para a chave", "rf_fee": "tarifa", "col_destination": "Destino",
		"rf_key_cpf": "CPF", "rf_key_cnpj": "CNPJ", "rf_key_email": "e-mail", "rf_key_phone": "telefone", "rf_key_evp": "chave aleatória",

		"wh_endpoints": "Endpoints", "wh_events_n": "eventos", "wh_log": "ver entregas",
		"wh_rotate": "Gerar novo segredo", "wh_rotate_confirm": "Gerar um novo segredo? O atual deixa de valer na hora.",
		"wh_delete": "Excluir", "wh_delete_confirm": "Excluir este endpoint? As entregas pendentes serão canceladas.",
		"wh_none": "Nenhum endpoint cadastrado.", "wh_max": "Limite de endpoints deste modo atingido.",
		"wh_add": "Adicionar endpoint", "wh_url": "URL que recebe os eventos",
		"wh_url_live": "Em modo real, só https e endereços públicos.", "wh_url_test": "Em modo de teste, http também é aceito.",
		"wh_events": "Eventos", "wh_legacy": "Eventos legados (payment.*, withdrawal.*)", "wh_create": "Criar endpoint",
		"wh_deliveries": "Entregas", "ep_ACTIVE": "Ativo", "ep_INACTIVE": "Inativo",
		"dl_PENDING": "Pendente", "dl_PROCESSING": "Enviando", "dl_DELIVERED": "Entregue", "dl_FAILED": "Falhou",
		"dl_CANCELLED": "Cancelada", "dl_attempts": "Tentativas", "dl_last": "Última resposta", "dl_next": "Próxima tentativa:",
		"dl_resend": "Reenviar", "dl_none": "Nenhuma entrega ainda.",

		"keys_intro_live": "Chaves de modo real movimentam dinheiro de verdade. Guarde-as num cofre de segredos.",
		"keys_intro_test": "Chaves de teste só enxergam dados de teste e usam o banco simulado.",
		"keys_label":      "Rótulo", "keys_label_ph": "ex.: servidor da loja", "keys_issue": "Criar chave",
		"keys_prefix": "Começo da chave", "keys_rotate": "Trocar",
		"keys_rotate_confirm": "Trocar esta chave? A atual deixa de funcionar em segundos.",
		"keys_revoke":         "Revogar", "keys_revoke_confirm": "Revogar esta chave? Não é possível desfazer.",
		"keys_none": "Nenhuma chave ativa neste modo.",

		"lg_request": "Requisição", "lg_duration": "Duração", "lg_key": "Chave", "lg_none": "Nenhuma requisição ainda.",
		"lg_hint": "As 100 requisições mais recentes feitas com chaves de API deste modo. Corpos e parâmetros nunca são guardados.",

		"secret_title_endpoint": "Segredo do webhook", "secret_title_key": "Sua nova chave de API",
		"secret_once": "Copie agora: por segurança, ela não será mostrada de novo.",
		"secret_key":  "Chave de API", "secret_signing": "Segredo de assinatura",
		"secret_key_hint":     "Envie-a no cabeçalho apikey de cada requisição.",
		"secret_signing_hint": "Use-o para verificar a assinatura de cada entrega.",
		"secret_done":         "Já copiei",

		"done_refunded": "Devolução solicitada.", "done_endpoint_deleted": "Endpoint excluído.",
		"done_resent": "Entrega reenviada.", "done_key_revoked": "Chave revogada.",

		"err_not_found": "Página não encontrada.", "err_forbidden": "Sessão expirada ou formulário inválido. Recarregue a página.",
		"err_form_too_large": "O formulário enviado é grande demais.", "err_form_invalid": "Formulário inválido. Recarregue a página.",
		"err_internal": "Algo deu errado do nosso lado. Tente de novo.", "err_receipt": "Só há comprovante de cobranças pagas.",
		"err_receipts_busy": "Muitos comprovantes sendo gerados agora. Tente de novo em instantes.",
		"err_search_none":   "Nenhuma cobrança com esse id ou txid neste modo.", "err_filter": "Filtro inválido ignorado.",
		"err_refund_amount": "Informe um valor válido, por exemplo 10,50.", "err_refund_reason": "O motivo pode ter até 500 caracteres.",
		"err_refund_reason_chars":   "O motivo não pode ter caracteres de controle nem de direção de texto.",
		"err_refund_failed":         "Não foi possível devolver. Confira os dados e tente de novo.",
		"err_refund_exceeds":        "O valor passa do que ainda pode ser devolvido.",
		"err_refund_balance":        "Saldo insuficiente para esta devolução.",
		"err_refund_not_refundable": "Esta cobrança não pode ser devolvida.",
		"err_refund_twice":          "Esta devolução já foi enviada.",
		"err_endpoint_limit":        "Limite de endpoints atingido.",
		"err_endpoint_forbidden":    "Essa URL aponta para um endereço não permitido.",
		"err_endpoint_events":       "Escolha pelo menos um evento.",
		"err_endpoint_invalid":      "URL inválida.",
		"err_resend_gone":           "O endpoint desta entrega foi excluído.",
		"err_key_label":             "O rótulo pode ter até 64 caracteres.",

		"st_PENDING": "Pendente", "st_WAITING_PAYMENT": "Aguardando pagamento", "st_PROCESSING": "Processando",
		"st_PAID": "Paga", "st_APPROVED": "Aprovada", "st_REFUSED": "Recusada", "st_CANCELLED": "Cancelada",
		"st_EXPIRED": "Expirada", "st_REFUNDED": "Devolvida", "st_CHARGEBACK": "Estornada", "st_DISPUTE": "Em disputa",

		"ev_charge.created": "Cobrança criada", "ev_charge.paid": "Cobrança paga", "ev_charge.failed": "Cobrança falhou",
		"ev_charge.expired": "Cobrança expirou", "ev_charge.refunded": "Cobrança devolvida", "ev_charge.disputed": "Cobrança contestada",
		"ev_charge.overdue": "Cobrança vencida",
		"ch_due":            "Vence em", "ch_overdue": "Vencida", "cd_paid_amount": "Valor pago",
		"due_abatement": "abatimento", "due_discount": "desconto", "due_fine": "multa", "due_interest": "juros",
		"ev_payment.created": "Transação criada (legado)", "ev_payment.completed": "Transação concluída (legado)",
		"ev_payment.failed": "Transação falhou (legado)", "ev_payment.expired": "Transação expirou (legado)",
		"ev_payment.refunded": "Devolução da transação (legado)", "ev_payment.status_changed": "Status da transação mudou (legado)",
	},
	langEN: {
		"skip": "Skip to content", "account": "Account", "nav_label": "Dashboard sections",
		"nav_overview": "Overview", "nav_charges": "Charges", "nav_charge": "Charge", "nav_refunds": "Refunds", "nav_payouts": "Payouts",
		"po_pending": "Pending", "po_processing": "Sending", "po_paid": "Paid", "po_failed": "Failed", "po_cancelled": "Cancelled",
		"po_destination": "Destination", "po_fee": "Fee", "po_empty": "No payouts yet.", "po_cancel": "Cancel",
		"po_cancel_confirm": "Cancel this payout? The amount goes back to the available balance.", "po_receipt": "Receipt",
		"po_hint":               "Payouts are requested through the API (POST /v1/payouts); only pending ones can be cancelled.",
		"done_payout_cancelled": "Payout cancelled.", "err_payout_not_cancellable": "This payout was already sent and cannot be cancelled.",
		"nav_webhooks": "Webhooks", "nav_keys": "API keys", "nav_logs": "Request logs", "nav_login": "Log in",
		"nav_secret": "Secret", "nav_error": "Error",
		"logout": "Log out", "logout_all": "Log out everywhere", "mode_test": "Test mode", "mode_enter_test": "Switch to test mode",
		"mode_leave_test": "Leave test mode and go back to live mode",
		"test_banner":     "Test mode: charges, keys and webhooks here move no real money.",
		"back_home":       "Back to the dashboard", "pager": "Pages", "first_page": "First page",
		"next_page": "Next page", "prev_page": "Previous page", "copy": "Copy", "copied": "Copied!",

		"login_title": "Log in to the dashboard", "login_intro": "Use your Quita account's e-mail and password.",
		"login_email": "E-mail", "login_password": "Password", "login_submit": "Log in",
		"login_invalid":   "Wrong e-mail or password.",
		"login_missing":   "Enter your e-mail and password.",
		"login_throttled": "Too many attempts. Wait a little and try again.",

		"ov_balance": "Balance", "ov_available": "Available", "ov_available_hint": "Can be withdrawn now",
		"ov_pending": "Pending", "ov_pending_hint": "Payments in their holding period",
		"ov_next_release": "Next release", "ov_no_release": "Nothing to release",
		"ov_volume": "Volume", "ov_today": "Today", "ov_30d": "Last 30 days", "ov_paid_of": "paid of",
		"ov_success": "success rate", "ov_ticket": "Average ticket", "ov_ticket_hint": "Last 30 days",
		"ov_chart": "Paid volume per day (30 days)", "ov_chart_empty": "No payments in the last 30 days.",
		"ov_chart_hint": "Best day:", "ov_recent": "Recent charges", "ov_see_all": "See all",

		"ch_search": "Search by charge id or txid", "ch_search_go": "Search", "ch_status": "Status",
		"ch_all": "All", "ch_from": "From", "ch_to": "To", "ch_filter": "Filter", "ch_clear": "Clear filters",
		"ch_empty":   "No charges found.",
		"col_amount": "Amount", "col_status": "Status", "col_id": "Id", "col_customer": "Customer", "col_created": "Created",
		"col_refund": "Refund", "col_charge": "Charge", "col_event": "Event", "col_actions": "Actions",

		"cd_refunded": "refunded", "cd_receipt": "Download receipt", "cd_refund_receipt": "refund receipt", "cd_details": "Details",
		"cd_expires": "Expires", "cd_paid_at": "Paid", "cd_method": "Payment method",
		"cd_e2e": "End-to-end id (E2E)", "cd_payer": "Payer", "cd_net": "Net amount",
		"cd_refund": "Refund", "cd_refund_amount": "Amount to refund", "cd_refund_max": "At most:",
		"cd_refund_reason": "Reason (optional)", "cd_refund_button": "Refund payment",
		"cd_refund_confirm": "Refund this amount to the payer? This cannot be undone.",
		"cd_not_refundable": "Only paid charges with an amount left to refund can be refunded.",
		"cd_timeline":       "Timeline: events and webhook deliveries",
		"cd_no_events":      "No events yet.",
		"rf_empty":          "No refunds yet.",
		"rf_PENDING":        "Pending", "rf_IN_PROGRESS": "In progress", "rf_REFUNDED": "Refunded", "rf_FAILED": "Failed",
		"rf_devolution": "returned to the payer through the original Pix", "rf_cashout_payer": "Pix to the payer's document",
		"rf_cashout_key": "Pix to key", "rf_fee": "fee", "col_destination": "Destination",
		"rf_key_cpf": "CPF", "rf_key_cnpj": "CNPJ", "rf_key_email": "e-mail", "rf_key_phone": "phone", "rf_key_evp": "random key",

		"wh_endpoints": "Endpoints", "wh_events_n": "events", "wh_log": "see deliveries",
		"wh_rotate": "Roll secret", "wh_rotate_confirm": "Roll the secret? The current one stops working at once.",
		"wh_delete": "Delete", "wh_delete_confirm": "Delete this endpoint? Its pending deliveries will be cancelled.",
		"wh_none": "No endpoints yet.", "wh_max": "This mode's endpoint limit is reached.",
		"wh_add": "Add an endpoint", "wh_url": "URL that receives the events",
		"wh_url_live": "In live mode, https and public addresses only.", "wh_url_test": "In test mode, http is accepted too.",
		"wh_events": "Events", "wh_legacy": "Legacy events (payment.*, withdrawal.*)", "wh_create": "Create endpoint",
		"wh_deliveries": "Deliveries", "ep_ACTIVE": "Active", "ep_INACTIVE": "Inactive",
		"dl_PENDING": "Pending", "dl_PROCESSING": "Sending", "dl_DELIVERED": "Delivered", "dl_FAILED": "Failed",
		"dl_CANCELLED": "Cancelled", "dl_attempts": "Attempts", "dl_last": "Last answer", "dl_next": "Next attempt:",
		"dl_resend": "Resend", "dl_none": "No deliveries yet.",

		"keys_intro_live": "Live keys move real money. Keep them in a secrets vault.",
		"keys_intro_test": "Test keys see only test data and use the simulated bank.",
		"keys_label":      "Label", "keys_label_ph": "e.g. shop server", "keys_issue": "Create key",
		"keys_prefix": "Key starts with", "keys_rotate": "Roll",
		"keys_rotate_confirm": "Roll this key? The current one stops working within seconds.",
		"keys_revoke":         "Revoke", "keys_revoke_confirm": "Revoke this key? This cannot be undone.",
		"keys_none": "No active keys in this mode.",

		"lg_request": "Request", "lg_duration": "Duration", "lg_key": "Key", "lg_none": "No requests yet.",
		"lg_hint": "The 100 most recent requests made with this mode's API keys. Bodies and parameters are never stored.",

		"secret_title_endpoint": "Webhook secret", "secret_title_key": "Your new API key",
		"secret_once": "Copy it now: for your safety it will not be shown again.",
		"secret_key":  "API key", "secret_signing": "Signing secret",
		"secret_key_hint":     "Send it in the apikey header of every request.",
		"secret_signing_hint": "Use it to verify the signature of every delivery.",
		"secret_done":         "I have copied it",

		"done_refunded": "Refund requested.", "done_endpoint_deleted": "Endpoint deleted.",
		"done_resent": "Delivery resent.", "done_key_revoked": "Key revoked.",

		"err_not_found": "Page not found.", "err_forbidden": "Your session expired or the form is stale. Reload the page.",
		"err_form_too_large": "The form sent is too large.", "err_form_invalid": "The form could not be read. Reload the page.",
		"err_internal": "Something went wrong on our side. Try again.", "err_receipt": "Only paid charges have a receipt.",
		"err_receipts_busy": "Too many receipts are being drawn right now. Try again in a moment.",
		"err_search_none":   "No charge with that id or txid in this mode.", "err_filter": "An invalid filter was ignored.",
		"err_refund_amount": "Enter a valid amount, e.g. 10.50.", "err_refund_reason": "The reason may be up to 500 characters.",
		"err_refund_reason_chars":   "The reason may not hold control or text-direction characters.",
		"err_refund_failed":         "The refund could not be made. Check and try again.",
		"err_refund_exceeds":        "The amount is more than what is left to refund.",
		"err_refund_balance":        "Not enough balance for this refund.",
		"err_refund_not_refundable": "This charge cannot be refunded.",
		"err_refund_twice":          "This refund was already sent.",
		"err_endpoint_limit":        "Endpoint limit reached.",
		"err_endpoint_forbidden":    "That URL points at an address that is not allowed.",
		"err_endpoint_events":       "Choose at least one event.",
		"err_endpoint_invalid":      "Invalid URL.",
		"err_resend_gone":           "This delivery's endpoint was deleted.",
		"err_key_label":             "The label may be up to 64 characters.",

		"st_PENDING": "Pending", "st_WAITING_PAYMENT": "Awaiting payment", "st_PROCESSING": "Processing",
		"st_PAID": "Paid", "st_APPROVED": "Approved", "st_REFUSED": "Refused", "st_CANCELLED": "Cancelled",
		"st_EXPIRED": "Expired", "st_REFUNDED": "Refunded", "st_CHARGEBACK": "Charged back", "st_DISPUTE": "Disputed",

		"ev_charge.created": "Charge created", "ev_charge.paid": "Charge paid", "ev_charge.failed": "Charge failed",
		"ev_charge.expired": "Charge expired", "ev_charge.refunded": "Charge refunded", "ev_charge.disputed": "Charge disputed",
		"ev_charge.overdue": "Charge overdue",
		"ch_due":            "Due", "ch_overdue": "Overdue", "cd_paid_amount": "Amount paid",
		"due_abatement": "rebate", "due_discount": "discount", "due_fine": "fine", "due_interest": "interest",
		"ev_payment.created": "Transaction created (legacy)", "ev_payment.completed": "Transaction completed (legacy)",
		"ev_payment.failed": "Transaction failed (legacy)", "ev_payment.expired": "Transaction expired (legacy)",
		"ev_payment.refunded": "Transaction refund (legacy)", "ev_payment.status_changed": "Transaction status changed (legacy)",
	},
}
