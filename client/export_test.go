package client

// WithStrictDecoding makes the client fail on any field of an answer its
// types do not have: the SDK tests run with it against the real server,
// so a field the server adds without the SDK fails them.
func WithStrictDecoding() Option { return func(c *Client) { c.strict = true } }
