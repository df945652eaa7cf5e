// A pulse counter on one of the RP2040's PWM slices (edge-counter.c): read() gives the edges counted since it opened.
class EdgeCounter @ "xs_feedagent_edge_counter_destructor" {
	constructor(pin, falling, pull) @ "xs_feedagent_edge_counter";
	read() @ "xs_feedagent_edge_counter_read";
	close() @ "xs_feedagent_edge_counter_close";
}

export default EdgeCounter;
