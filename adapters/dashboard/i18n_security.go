package dashboard

// securityMessages are the strings of the security page, the TOTP setup
// and the login's second step, merged into messages at start.
var securityMessages = map[string]map[string]string{
	langPT: {
		"nav_security": "Segurança", "nav_security_totp": "Ativar a verificação em duas etapas",
		"nav_security_codes": "Códigos de recuperação", "nav_login_code": "Verificação em duas etapas",

		"login_code_title": "Verificação em duas etapas",
		"login_code_intro": "Digite o código de 6 dígitos que o seu app autenticador mostra agora.",
		"login_code":       "Código", "login_code_submit": "Confirmar",
		"login_code_recovery": "Sem o celular? Digite um dos seus códigos de recuperação (cada um vale uma vez).",
		"login_code_restart":  "Entrar com outra conta",
		"login_expired":       "O tempo para digitar o código acabou. Entre de novo com e-mail e senha.",
		"login_code_missing":  "Digite o código.",
		"login_code_invalid":  "Código incorreto ou já usado. Espere o próximo código do app e tente de novo.",

		"keys_code": "Código do app autenticador", "keys_code_ph": "Código",
		"keys_code_hint": "Criar ou rolar uma chave do modo real pede um código novo do seu app autenticador.",

		"sec_totp": "Verificação em duas etapas", "sec_totp_on": "Ativada", "sec_totp_off": "Desativada",
		"sec_totp_since":    "desde",
		"sec_totp_on_hint":  "Ao entrar, depois da senha, o painel pede o código do app autenticador. Chaves de API do modo real também pedem um código.",
		"sec_totp_off_hint": "Proteja o acesso com um app autenticador (Google Authenticator, Authy, 1Password…): além da senha, o painel pedirá um código que muda a cada 30 segundos.",
		"sec_totp_begin":    "Ativar a verificação em duas etapas",
		"sec_recovery_left": "Códigos de recuperação restantes:", "sec_recovery_low": "para ter novos, desative e ative de novo.",
		"sec_code_or_recovery":     "Código do app ou de recuperação",
		"sec_totp_disable":         "Desativar",
		"sec_totp_disable_confirm": "Desativar a verificação em duas etapas? O acesso passa a pedir só a senha.",
		"sec_setup_scan":           "Abra o app autenticador e leia este QR code.",
		"sec_setup_qr_alt":         "QR code da chave da verificação em duas etapas",
		"sec_setup_type":           "Não consegue ler? Digite esta chave no app (tipo: baseada em tempo).",
		"sec_setup_key":            "Chave", "sec_code": "Código de 6 dígitos",
		"sec_setup_confirm": "Digite o código que o app mostra para confirmar.",
		"sec_setup_turn_on": "Confirmar e ativar", "sec_setup_cancel": "Agora não",
		"sec_codes_once":       "Guarde estes códigos de recuperação agora, num lugar seguro: eles não serão mostrados de novo. Cada um permite entrar uma vez sem o app.",
		"sec_codes_copy_label": "Todos os códigos",
		"sec_codes_hint":       "Perdeu o celular e os códigos? O operador da Quita pode desativar a verificação pela linha de comando.",
		"sec_sessions":         "Sessões ativas",
		"sec_sessions_hint":    "Onde a sua conta está conectada ao painel ou à API do painel. Encerre o que não reconhecer.",
		"sec_device":           "Dispositivo", "sec_address": "Endereço", "sec_started": "Início", "sec_last_seen": "Última atividade",
		"sec_this_session": "Esta sessão", "sec_revoke": "Encerrar", "sec_revoke_this": "Sair",
		"sec_revoke_this_confirm": "Encerrar esta sessão? Você sai do painel.",
		"sec_sessions_none":       "Nenhuma sessão registrada.",
		"sec_end_others":          "Encerrar todas as outras sessões",
		"sec_end_others_confirm":  "Encerrar todas as sessões, menos esta?",
		"sec_agent_unknown":       "Desconhecido", "sec_seen_now": "Agora",

		"done_totp_enabled": "Verificação em duas etapas ativada.", "done_totp_disabled": "Verificação em duas etapas desativada.",
		"done_session_revoked": "Sessão encerrada.", "done_sessions_ended": "As outras sessões foram encerradas.",
		"err_totp_enabled":     "A verificação em duas etapas já está ativada.",
		"err_totp_not_enabled": "A verificação em duas etapas está desativada.",
		"err_totp_no_setup":    "Comece a ativação de novo.",
		"err_code_missing":     "Digite o código do app autenticador.",
		"err_code_invalid":     "Código incorreto ou já usado. Espere o próximo código do app e tente de novo.",
		"err_code_throttled":   "Muitos códigos errados. Aguarde alguns minutos e tente de novo.",
	},
	langEN: {
		"nav_security": "Security", "nav_security_totp": "Turn on two-step verification",
		"nav_security_codes": "Recovery codes", "nav_login_code": "Two-step verification",

		"login_code_title": "Two-step verification",
		"login_code_intro": "Enter the 6-digit code your authenticator app shows now.",
		"login_code":       "Code", "login_code_submit": "Confirm",
		"login_code_recovery": "No phone at hand? Enter one of your recovery codes (each works once).",
		"login_code_restart":  "Log in with another account",
		"login_expired":       "The time to enter the code ran out. Log in again with your e-mail and password.",
		"login_code_missing":  "Enter the code.",
		"login_code_invalid":  "Wrong or already used code. Wait for the app's next code and try again.",

		"keys_code": "Authenticator app code", "keys_code_ph": "Code",
		"keys_code_hint": "Creating or rolling a live-mode key asks for a fresh code from your authenticator app.",

		"sec_totp": "Two-step verification", "sec_totp_on": "On", "sec_totp_off": "Off",
		"sec_totp_since":    "since",
		"sec_totp_on_hint":  "After your password, logging in asks for the code of your authenticator app. Live-mode API keys ask for a code too.",
		"sec_totp_off_hint": "Protect your login with an authenticator app (Google Authenticator, Authy, 1Password…): besides your password, the dashboard will ask for a code that changes every 30 seconds.",
		"sec_totp_begin":    "Turn on two-step verification",
		"sec_recovery_left": "Recovery codes left:", "sec_recovery_low": "to get new ones, turn it off and on again.",
		"sec_code_or_recovery":     "App code or recovery code",
		"sec_totp_disable":         "Turn off",
		"sec_totp_disable_confirm": "Turn off two-step verification? Logging in will ask for the password only.",
		"sec_setup_scan":           "Open your authenticator app and scan this QR code.",
		"sec_setup_qr_alt":         "QR code of the two-step verification key",
		"sec_setup_type":           "Cannot scan it? Type this key into the app (type: time based).",
		"sec_setup_key":            "Key", "sec_code": "6-digit code",
		"sec_setup_confirm": "Enter the code the app shows to confirm.",
		"sec_setup_turn_on": "Confirm and turn on", "sec_setup_cancel": "Not now",
		"sec_codes_once":       "Keep these recovery codes now, somewhere safe: they will not be shown again. Each one logs you in once without the app.",
		"sec_codes_copy_label": "All codes",
		"sec_codes_hint":       "Lost your phone and the codes? Quita's operator can turn the verification off from the command line.",
		"sec_sessions":         "Active sessions",
		"sec_sessions_hint":    "Where your login is signed in to the dashboard or its API. End anything you do not recognise.",
		"sec_device":           "Device", "sec_address": "Address", "sec_started": "Started", "sec_last_seen": "Last activity",
		"sec_this_session": "This session", "sec_revoke": "End", "sec_revoke_this": "Log out",
		"sec_revoke_this_confirm": "End this session? You will be logged out.",
		"sec_sessions_none":       "No recorded sessions.",
		"sec_end_others":          "End all other sessions",
		"sec_end_others_confirm":  "End every session but this one?",
		"sec_agent_unknown":       "Unknown", "sec_seen_now": "Now",

		"done_totp_enabled": "Two-step verification is on.", "done_totp_disabled": "Two-step verification is off.",
		"done_session_revoked": "Session ended.", "done_sessions_ended": "The other sessions were ended.",
		"err_totp_enabled":     "Two-step verification is already on.",
		"err_totp_not_enabled": "Two-step verification is off.",
		"err_totp_no_setup":    "Start turning it on again.",
		"err_code_missing":     "Enter the code of your authenticator app.",
		"err_code_invalid":     "Wrong or already used code. Wait for the app's next code and try again.",
		"err_code_throttled":   "Too many wrong codes. Wait a few minutes and try again.",
	},
}

func init() {
	for lang, m := range securityMessages {
		for k, v := range m {
			messages[lang][k] = v
		}
	}
}
