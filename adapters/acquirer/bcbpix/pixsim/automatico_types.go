package pixsim

// The bodies of Pix Automático as API Pix 2.9 names their fields.

// Atualizacao is one entry of a status history.
type Atualizacao struct {
	Status string `json:"status"`
	Data   string `json:"data"`
}

// Rejeicao says why a recurrence, a recurring charge or an attempt was
// refused: a code of the SPI message catalogue and its description.
type Rejeicao struct {
	Codigo    string `json:"codigo"`
	Descricao string `json:"descricao"`
}

// Cancelamento says who cancelled a recurrence or a recurring charge.
type Cancelamento struct {
	Solicitante string `json:"solicitante"`
	Codigo      string `json:"codigo"`
	Descricao   string `json:"descricao"`
}

// Encerramento holds exactly one of Rejeicao and Cancelamento.
type Encerramento struct {
	Rejeicao     *Rejeicao     `json:"rejeicao,omitempty"`
	Cancelamento *Cancelamento `json:"cancelamento,omitempty"`
}

// RecVinculo is what the payer recognises the recurrence by.
type RecVinculo struct {
	Objeto   string `json:"objeto,omitempty"`
	Contrato string `json:"contrato"`
	Devedor  Person `json:"devedor"`
}

// RecCalendario is the recurrence's first payment day, last day and period.
type RecCalendario struct {
	DataInicial   string `json:"dataInicial"`
	DataFinal     string `json:"dataFinal,omitempty"`
	Periodicidade string `json:"periodicidade"`
}

// RecValor is a fixed amount (valorRec) or the receiver's floor for the
// payer's maximum (valorMinimoRecebedor), never both.
type RecValor struct {
	ValorRec             string `json:"valorRec,omitempty"`
	ValorMinimoRecebedor string `json:"valorMinimoRecebedor,omitempty"`
}

// RecRecebedor is the receiving merchant; ISPBParticipante is stated only
// in the payload the payer's PSP reads.
type RecRecebedor struct {
	CNPJ             string `json:"cnpj"`
	Nome             string `json:"nome"`
	Convenio         string `json:"convenio,omitempty"`
	ISPBParticipante string `json:"ispbParticipante,omitempty"`
}

// RecPagador is the payer who approved the recurrence: its PSP, its CPF or
// CNPJ and, optionally, its municipality (IBGE code).
type RecPagador struct {
	ISPBParticipante string `json:"ispbParticipante"`
	CPF              string `json:"cpf,omitempty"`
	CNPJ             string `json:"cnpj,omitempty"`
	CodMun           string `json:"codMun,omitempty"`
}

// RecAtivacao is the journey that activated the recurrence;
// DadosJornada.TxID names the immediate charge of journey 3.
type RecAtivacao struct {
	TipoJornada  string        `json:"tipoJornada"`
	DadosJornada *DadosJornada `json:"dadosJornada,omitempty"`
}

// DadosJornada names the immediate charge paid with a journey 3 approval.
type DadosJornada struct {
	TxID string `json:"txid"`
}

// DadosQR is the composite QR code of a journey (GET /rec/{idRec}[?txid]).
type DadosQR struct {
	Jornada       string `json:"jornada"`
	PixCopiaECola string `json:"pixCopiaECola"`
}

// LocRec is a payload location of a recurrence (PayloadLocationRecCompleta).
type LocRec struct {
	ID       int64  `json:"id"`
	Location string `json:"location"`
	Tipo     string `json:"tipo"`
	Criacao  string `json:"criacao"`
	IDRec    string `json:"idRec,omitempty"`
}

// Rec is a recurrence as GET /rec/{idRec} answers it (RecCompleta).
type Rec struct {
	IDRec               string        `json:"idRec"`
	Vinculo             RecVinculo    `json:"vinculo"`
	Calendario          RecCalendario `json:"calendario"`
	Valor               *RecValor     `json:"valor,omitempty"`
	Recebedor           RecRecebedor  `json:"recebedor"`
	Pagador             *RecPagador   `json:"pagador,omitempty"`
	Status              string        `json:"status"`
	PoliticaRetentativa string        `json:"politicaRetentativa"`
	Loc                 *LocRec       `json:"loc,omitempty"`
	Atualizacao         []Atualizacao `json:"atualizacao"`
	Encerramento        *Encerramento `json:"encerramento,omitempty"`
	Solicitacao         []SolicRec    `json:"solicitacao,omitempty"`
	Ativacao            RecAtivacao   `json:"ativacao"`
	DadosQR             *DadosQR      `json:"dadosQR,omitempty"`
}

// RecPayload is what the payer's PSP reads of a recurrence: at its
// location (signed) and in a request for confirmation.
type RecPayload struct {
	IDRec               string        `json:"idRec"`
	Vinculo             RecVinculo    `json:"vinculo"`
	Calendario          RecCalendario `json:"calendario"`
	Valor               *RecValor     `json:"valor,omitempty"`
	Recebedor           RecRecebedor  `json:"recebedor"`
	PoliticaRetentativa string        `json:"politicaRetentativa"`
	Atualizacao         []Atualizacao `json:"atualizacao"`
}

// Destinatario is the payer's account a request for confirmation goes to.
type Destinatario struct {
	Agencia          string `json:"agencia,omitempty"`
	Conta            string `json:"conta"`
	ISPBParticipante string `json:"ispbParticipante"`
	CPF              string `json:"cpf,omitempty"`
	CNPJ             string `json:"cnpj,omitempty"`
}

// SolicRec is a request for the payer's confirmation of a recurrence
// (SolicRecCompleta): journey 1.
type SolicRec struct {
	IDSolicRec string `json:"idSolicRec"`
	IDRec      string `json:"idRec"`
	Calendario struct {
		DataExpiracaoSolicitacao string `json:"dataExpiracaoSolicitacao"`
	} `json:"calendario"`
	Destinatario Destinatario  `json:"destinatario"`
	Status       string        `json:"status"`
	Atualizacao  []Atualizacao `json:"atualizacao"`
	RecPayload   *RecPayload   `json:"recPayload,omitempty"`
}

// CobRRecebedor is the receiver's account a recurring charge credits.
type CobRRecebedor struct {
	Agencia   string `json:"agencia,omitempty"`
	Conta     string `json:"conta"`
	TipoConta string `json:"tipoConta"`
	CNPJ      string `json:"cnpj,omitempty"`
	Nome      string `json:"nome,omitempty"`
}

// CobRDevedor is the optional contact and address of a recurring charge's
// debtor (DadosDevedorRecorrencia).
type CobRDevedor struct {
	Email      string `json:"email,omitempty"`
	Logradouro string `json:"logradouro,omitempty"`
	Cidade     string `json:"cidade,omitempty"`
	UF         string `json:"uf,omitempty"`
	CEP        string `json:"cep,omitempty"`
}

// Tentativa is one attempt to settle a recurring charge; EndToEndID is the
// id the Pix takes when the attempt is paid.
type Tentativa struct {
	DataLiquidacao string        `json:"dataLiquidacao"`
	Tipo           string        `json:"tipo"`
	Status         string        `json:"status"`
	EndToEndID     string        `json:"endToEndId"`
	Atualizacao    []Atualizacao `json:"atualizacao"`
	Rejeicao       *Rejeicao     `json:"rejeicao,omitempty"`
}

// CobR is a recurring charge as GET /cobr/{txid} answers it (CobRCompleta).
type CobR struct {
	IDRec         string `json:"idRec"`
	TxID          string `json:"txid"`
	InfoAdicional string `json:"infoAdicional,omitempty"`
	Calendario    struct {
		Criacao          string `json:"criacao"`
		DataDeVencimento string `json:"dataDeVencimento"`
	} `json:"calendario"`
	Valor struct {
		Original string `json:"original"`
	} `json:"valor"`
	Status              string        `json:"status"`
	PoliticaRetentativa string        `json:"politicaRetentativa"`
	AjusteDiaUtil       bool          `json:"ajusteDiaUtil"`
	Devedor             *CobRDevedor  `json:"devedor,omitempty"`
	Recebedor           CobRRecebedor `json:"recebedor"`
	Pix                 []*Pix        `json:"pix,omitempty"`
	Atualizacao         []Atualizacao `json:"atualizacao"`
	Encerramento        *Encerramento `json:"encerramento,omitempty"`
	Tentativas          []Tentativa   `json:"tentativas,omitempty"`
}
