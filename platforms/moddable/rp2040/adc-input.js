// The SDK's ECMA-419 Analog for the RP2040, selecting its own input before every read (adc-input.c says why).
import Analog from "embedded:io/analog";

function select(input) @ "xs_feedagent_adc_select";

class AdcInput extends Analog {
	#input;
	constructor(options) {
		super(options);
		// GP26 to GP28 are ADC inputs 0 to 2 (the SDK's Analog takes only those pins).
		this.#input = options.pin - 26;
	}
	read() {
		select(this.#input);
		return super.read();
	}
}

export default AdcInput;
