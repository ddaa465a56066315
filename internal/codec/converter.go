package codec

import (
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
)

// DataConverter is the default converter with every payload encrypted.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encrypts failures' messages and stack traces too: by
// default Temporal stores them in clear, and an error message may quote a
// caller's details.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter:          c.DataConverter(),
		EncodeCommonAttributes: true,
	})
}

// Apply sets o's data and failure converters to c's, for every Temporal
// client of the process: a client without them would write clear payloads
// and fail to read encrypted ones.
func (c *Codec) Apply(o client.Options) client.Options {
	o.DataConverter = c.DataConverter()
	o.FailureConverter = c.FailureConverter()
	return o
}
