package dashboard

// subaccountMessages are the strings of the sub-account pages, the
// invitation pages and a charge's splits, merged into messages at start.
var subaccountMessages = map[string]map[string]string{
	langPT: {
		"nav_subaccounts": "Subcontas", "nav_subaccount": "Subconta", "nav_invited": "Convite criado",
		"nav_invite": "Convite para o painel",
		"sa_new":     "Nova subconta",
		"sa_new_hint": "Cada vendedor da sua plataforma é uma subconta, com carteira própria. " +
			"Divida cobranças com ela (splits) e convide o vendedor para ver os próprios dados no painel.",
		"sa_name": "Nome", "sa_document": "CPF ou CNPJ", "sa_document_hint": "Não pode ser alterado depois; aparece sempre mascarado.",
		"sa_email": "E-mail de contato", "sa_pix_key": "Chave Pix para saques (opcional)", "sa_pix_key_short": "Chave Pix para saques", "sa_create": "Criar subconta",
		"sa_st_active": "Ativa", "sa_st_disabled": "Desativada",
		"sa_empty": "Nenhuma subconta ainda.",
		"sa_empty_next": "Crie a primeira com o formulário abaixo ou pela API (POST /v1/subaccounts). Depois, crie cobranças com splits " +
			"para dividir cada pagamento e convide o vendedor para o painel na página da subconta.",
		"sa_hint": "Saldos no modo atual. Subcontas valem nos dois modos; o dinheiro de cada modo fica separado.",

		"sa_disabled_at": "Desativada em", "sa_logins": "Acessos ao painel",
		"inv_st_pending": "Convite pendente", "inv_st_accepted": "Aceito", "inv_st_expired": "Expirado",
		"inv_accepted_at": "aceito em", "inv_expires": "vale até", "inv_more": "Há convites mais antigos.",
		"inv_none":  "Ninguém acessa o painel por esta subconta ainda. Convide o vendedor abaixo.",
		"inv_email": "E-mail do acesso",
		"inv_hint":  "Gera um link de uso único, válido por 7 dias, para o vendedor definir a senha. Ele verá só os dados desta subconta.",
		"inv_send":  "Gerar convite",
		"inv_once":  "Copie o link agora e envie ao vendedor: por segurança, ele não será mostrado de novo.",
		"inv_link":  "Link do convite", "inv_link_hint": "Vale por 7 dias e pode ser usado uma vez. Se expirar, gere outro.",
		"sa_transfers": "Repasses recebidos (splits)", "sa_source_charge": "Cobrança de origem",
		"sa_transfers_none": "Nenhum repasse ainda: crie uma cobrança com splits para esta subconta; quando for paga, a parte dela aparece aqui.",
		"sa_charges":        "Cobranças da subconta",
		"sa_charges_none":   "Nenhuma cobrança da própria subconta. Crie cobranças em nome dela pela API com o cabeçalho Quita-Account.",
		"sa_disable":        "Desativar subconta",
		"sa_disable_hint": "Definitivo: a plataforma deixa de agir por ela e de dividir cobranças com ela, e os acessos e chaves " +
			"da subconta param. Cobranças, carteiras e eventos ficam.",
		"sa_disable_check":   "Entendo que não é possível desfazer.",
		"sa_disable_confirm": "Desativar esta subconta? Não é possível desfazer.",
		"sa_is_disabled":     "Esta subconta está desativada.",

		"acc_title": "Defina sua senha", "acc_intro": "Você foi convidado para acessar o painel da Quita como",
		"acc_platform": "subconta de", "acc_password": "Senha", "acc_password_hint": "Pelo menos 10 caracteres.",
		"acc_password_confirm": "Repita a senha", "acc_submit": "Criar acesso e entrar",
		"invite_mismatch":    "As senhas não conferem.",
		"invite_password":    "A senha precisa ter pelo menos 10 caracteres (e no máximo 1024 bytes).",
		"invite_email_taken": "Este e-mail já tem acesso ao painel da Quita. Peça à plataforma um convite para outro e-mail.",

		"err_subaccount_name":            "Informe o nome (até 140 caracteres, sem caracteres de controle).",
		"err_subaccount_document":        "Informe um CPF ou CNPJ válido.",
		"err_subaccount_email":           "Informe um e-mail válido.",
		"err_subaccount_pix_key":         "Chave Pix inválida: use CPF, CNPJ, e-mail, telefone +55 ou chave aleatória.",
		"err_subaccount_invalid":         "Não foi possível criar a subconta. Confira os dados.",
		"err_subaccount_confirm":         "Marque a confirmação para desativar a subconta.",
		"err_invite_email":               "Informe um e-mail válido para o convite.",
		"err_invite_disabled":            "Esta subconta está desativada: não recebe novos acessos.",
		"err_invite_unknown":             "Convite não encontrado. Confira o link ou peça um novo à plataforma.",
		"err_invite_used":                "Este convite já foi usado. Entre com o e-mail e a senha que você definiu.",
		"err_invite_expired":             "Este convite expirou. Peça um novo à plataforma.",
		"err_invite_subaccount_disabled": "A plataforma desativou esta subconta: o convite não vale mais.",
		"done_subaccount_created":        "Subconta criada.", "done_subaccount_disabled": "Subconta desativada.",
		"done_invite_accepted": "Acesso criado. Bem-vindo ao painel!",

		"sp_title": "Divisão do pagamento (splits)", "sp_fee_payer": "Tarifas pagas por:",
		"sp_fee_platform": "plataforma", "sp_fee_proportional": "cada parte, proporcionalmente",
		"sp_account": "Subconta", "sp_percent": "Percentual", "sp_at_payment": "definido no pagamento",
		"sp_st_pending": "Pendente", "sp_st_paid": "Repassado", "sp_st_cancelled": "Cancelado",
	},
	langEN: {
		"nav_subaccounts": "Sub-accounts", "nav_subaccount": "Sub-account", "nav_invited": "Invitation created",
		"nav_invite": "Dashboard invitation",
		"sa_new":     "New sub-account",
		"sa_new_hint": "Each seller of your platform is a sub-account with a wallet of its own. " +
			"Split charges with it and invite the seller to see their own data in the dashboard.",
		"sa_name": "Name", "sa_document": "CPF or CNPJ", "sa_document_hint": "Cannot be changed later; always shown masked.",
		"sa_email": "Contact e-mail", "sa_pix_key": "Pix key for payouts (optional)", "sa_pix_key_short": "Pix key for payouts", "sa_create": "Create sub-account",
		"sa_st_active": "Active", "sa_st_disabled": "Disabled",
		"sa_empty": "No sub-accounts yet.",
		"sa_empty_next": "Create the first one with the form below or through the API (POST /v1/subaccounts). Then create charges with " +
			"splits to share each payment, and invite the seller to the dashboard from the sub-account's page.",
		"sa_hint": "Balances in the current mode. Sub-accounts exist in both modes; each mode's money stays apart.",

		"sa_disabled_at": "Disabled", "sa_logins": "Dashboard logins",
		"inv_st_pending": "Invitation pending", "inv_st_accepted": "Accepted", "inv_st_expired": "Expired",
		"inv_accepted_at": "accepted", "inv_expires": "valid until", "inv_more": "There are older invitations.",
		"inv_none":  "Nobody logs in as this sub-account yet. Invite the seller below.",
		"inv_email": "Login e-mail",
		"inv_hint":  "Makes a single-use link, valid for 7 days, for the seller to set a password. They will see this sub-account's data only.",
		"inv_send":  "Create invitation",
		"inv_once":  "Copy the link now and send it to the seller: for security it will not be shown again.",
		"inv_link":  "Invitation link", "inv_link_hint": "Valid for 7 days and usable once. If it expires, create another.",
		"sa_transfers": "Transfers received (splits)", "sa_source_charge": "Source charge",
		"sa_transfers_none": "No transfers yet: create a charge with splits for this sub-account; once it is paid, its share shows here.",
		"sa_charges":        "The sub-account's charges",
		"sa_charges_none":   "No charges of the sub-account itself. Create charges on its behalf through the API with the Quita-Account header.",
		"sa_disable":        "Disable sub-account",
		"sa_disable_hint": "Final: the platform can no longer act for it or split charges with it, and the sub-account's logins " +
			"and keys stop. Charges, wallets and events stay.",
		"sa_disable_check":   "I understand this cannot be undone.",
		"sa_disable_confirm": "Disable this sub-account? This cannot be undone.",
		"sa_is_disabled":     "This sub-account is disabled.",

		"acc_title": "Set your password", "acc_intro": "You were invited to the Quita dashboard as",
		"acc_platform": "a sub-account of", "acc_password": "Password", "acc_password_hint": "At least 10 characters.",
		"acc_password_confirm": "Repeat the password", "acc_submit": "Create login and log in",
		"invite_mismatch":    "The passwords do not match.",
		"invite_password":    "The password needs at least 10 characters (and at most 1024 bytes).",
		"invite_email_taken": "This e-mail already has a Quita dashboard login. Ask the platform for an invitation to another e-mail.",

		"err_subaccount_name":            "Enter the name (up to 140 characters, no control characters).",
		"err_subaccount_document":        "Enter a valid CPF or CNPJ.",
		"err_subaccount_email":           "Enter a valid e-mail.",
		"err_subaccount_pix_key":         "Invalid Pix key: use a CPF, CNPJ, e-mail, +55 phone or random key.",
		"err_subaccount_invalid":         "The sub-account could not be created. Check the fields.",
		"err_subaccount_confirm":         "Tick the confirmation to disable the sub-account.",
		"err_invite_email":               "Enter a valid e-mail for the invitation.",
		"err_invite_disabled":            "This sub-account is disabled: it gets no new logins.",
		"err_invite_unknown":             "Invitation not found. Check the link or ask the platform for a new one.",
		"err_invite_used":                "This invitation was already used. Log in with the e-mail and the password you set.",
		"err_invite_expired":             "This invitation has expired. Ask the platform for a new one.",
		"err_invite_subaccount_disabled": "The platform disabled this sub-account: the invitation no longer works.",
		"done_subaccount_created":        "Sub-account created.", "done_subaccount_disabled": "Sub-account disabled.",
		"done_invite_accepted": "Login created. Welcome to the dashboard!",

		"sp_title": "Payment split", "sp_fee_payer": "Fees paid by:",
		"sp_fee_platform": "the platform", "sp_fee_proportional": "each party, proportionally",
		"sp_account": "Sub-account", "sp_percent": "Percent", "sp_at_payment": "set at payment",
		"sp_st_pending": "Pending", "sp_st_paid": "Transferred", "sp_st_cancelled": "Cancelled",
	},
}

func init() {
	for lang, m := range subaccountMessages {
		for k, v := range m {
			messages[lang][k] = v
		}
	}
}
