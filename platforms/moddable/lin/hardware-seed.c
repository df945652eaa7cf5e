// 32 random bits for the agent's seed on the simulator, from the OS (getrandom, Linux 3.17, glibc 2.25).
#include "xsmc.h"
#include <stdint.h>
#include <sys/random.h>

void xs_feedagent_hardware_seed(xsMachine *the)
{
	uint32_t seed;
	if (getrandom(&seed, sizeof(seed), 0) != (ssize_t)sizeof(seed))
		xsUnknownError("getrandom failed");
	xsmcSetNumber(xsResult, (double)seed);
}
