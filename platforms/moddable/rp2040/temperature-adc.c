// The RP2040's internal temperature sensor, ADC input 4, for rp2040/temperature-adc.js. Neither of the
// SDK's analog modules reaches it: the ECMA-419 Analog (modules/io/analog/pico/_analog.c) accepts GPIO 26
// to 28 only, pins/analog (modules/pins/analog/pico/analog.c) channels 0 to 2, and neither sets the
// sensor's enable bit (ADC CS.TS_EN).
#include "xsmc.h"
#include "hardware/adc.h"

void xs_feedagent_temperature_adc(xsMachine *the)
{
	static bool ready = false;
	if (!ready) {
		adc_init();
		adc_set_temp_sensor_enabled(true);
		ready = true;
	}
	// The ADC is shared with the SDK's Analog, which selects its input once and then only reads:
	// put its input back.
	uint previous = adc_get_selected_input();
	adc_select_input(ADC_TEMPERATURE_CHANNEL_NUM);
	uint16_t raw = adc_read();
	adc_select_input(previous);
	xsmcSetInteger(xsResult, raw);
}
