// 32 random bits for the agent's seed from the Pico SDK's pico_rand, which the Moddable SDK's pico build
// compiles in: it seeds itself from the ring oscillator's random bit, the time and the board's unique id.
#include "xsmc.h"
#include "pico/rand.h"

void xs_feedagent_hardware_seed(xsMachine *the)
{
	xsmcSetNumber(xsResult, (double)get_rand_32());
}
