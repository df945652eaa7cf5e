// A pulse counter on the RP2040's PWM hardware, for rp2040/edge-counter.js: a PWM slice whose clock is
// the rising (or falling) edges of its B pin counts every pulse while JavaScript is busy elsewhere (a
// count made in a GPIO interrupt's callback would merge the edges of one event loop turn). The SDK's
// ECMA-419 PulseCount on the Pico is a quadrature decoder of two pins in JavaScript
// (modules/io/pulsecount/pico/_pulsecount.js), not a counter of one.
#include "xsmc.h"
#include "xsHost.h"
#include "builtinCommon.h"
#include "hardware/gpio.h"
#include "hardware/pwm.h"

typedef struct {
	uint32_t total;
	uint16_t last;
	uint8_t pin;
	uint8_t slice;
} EdgeCounterRecord;

void xs_feedagent_edge_counter_destructor(void *data)
{
	EdgeCounterRecord *counter = data;
	if (!counter)
		return;
	pwm_set_enabled(counter->slice, false);
	gpio_deinit(counter->pin);
	builtinFreePin(counter->pin);
	c_free(counter);
}

// new EdgeCounter(pin, falling, pull): pull 0 none, 1 up, 2 down.
void xs_feedagent_edge_counter(xsMachine *the)
{
	int pin = xsmcToInteger(xsArg(0));
	int falling = xsmcToBoolean(xsArg(1));
	int pull = xsmcToInteger(xsArg(2));
	if ((pin < 0) || (pin >= NUM_BANK0_GPIOS) || (pwm_gpio_to_channel(pin) != PWM_CHAN_B))
		xsRangeError("a pulse counter needs an odd GPIO: its PWM slice counts on the B pin");
	if (!builtinIsPinFree(pin))
		xsRangeError("in use");
	EdgeCounterRecord *counter = c_calloc(1, sizeof(EdgeCounterRecord));
	if (!counter)
		xsRangeError("no memory");
	counter->pin = pin;
	counter->slice = pwm_gpio_to_slice_num(pin);
	pwm_config config = pwm_get_default_config();
	pwm_config_set_clkdiv_mode(&config, falling ? PWM_DIV_B_FALLING : PWM_DIV_B_RISING);
	pwm_config_set_clkdiv_int(&config, 1);
	pwm_init(counter->slice, &config, false);
	gpio_set_function(pin, GPIO_FUNC_PWM);
	gpio_set_pulls(pin, pull == 1, pull == 2);
	pwm_set_counter(counter->slice, 0);
	pwm_set_enabled(counter->slice, true);
	builtinUsePin(pin);
	xsmcSetHostData(xsThis, counter);
}

// Edges since the counter opened: the 16-bit hardware counter wraps, so it must be read at least once
// every 65,535 edges (a reading every few seconds is ample for any meter).
void xs_feedagent_edge_counter_read(xsMachine *the)
{
	EdgeCounterRecord *counter = xsmcGetHostData(xsThis);
	if (!counter)
		xsUnknownError("closed");
	uint16_t now = pwm_get_counter(counter->slice);
	counter->total += (uint16_t)(now - counter->last);
	counter->last = now;
	xsmcSetNumber(xsResult, counter->total);
}

void xs_feedagent_edge_counter_close(xsMachine *the)
{
	xs_feedagent_edge_counter_destructor(xsmcGetHostData(xsThis));
	xsmcSetHostData(xsThis, NULL);
}
