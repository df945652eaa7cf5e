// The ADC input an rp2040/adc-input.js reads. The SDK's ECMA-419 Analog on the Pico selects its input once,
// in its constructor, and then only reads (modules/io/analog/pico/_analog.c): with two analog inputs, or
// the temperature role beside one, a read gives whatever input was selected last.
#include "xsmc.h"
#include "hardware/adc.h"

void xs_feedagent_adc_select(xsMachine *the)
{
	adc_select_input(xsmcToInteger(xsArg(0)));
}
