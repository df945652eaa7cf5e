// rp2040/adc-input.js: the SDK's Analog, reading its own input whatever another selected (adc-input.c).
import type Analog from 'embedded:io/analog';

declare const AdcInput: typeof Analog;
export default AdcInput;
