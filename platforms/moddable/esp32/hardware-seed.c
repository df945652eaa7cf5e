// 32 random bits for the agent's seed from ESP-IDF's esp_random: the hardware random number generator,
// true random once the radio (Wi-Fi, which setup/network brings up before main) is running.
#include "xsmc.h"
#include "esp_random.h"

void xs_feedagent_hardware_seed(xsMachine *the)
{
	xsmcSetNumber(xsResult, (double)esp_random());
}
