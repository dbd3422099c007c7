/* A calendar queue (R. Brown, CACM 31(10), 1988), the classic O(1)-average event list,
 * kept only as the benchmark's comparison point for the engine's heap (sim/engine.h
 * says why the engine does not use it).  Events are (time, sequence) pairs; ties in
 * time pop in sequence order, like the engine. */
#ifndef FLEETSIM_BENCH_CALENDAR_QUEUE_H
#define FLEETSIM_BENCH_CALENDAR_QUEUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct calendar_queue calendar_queue;

calendar_queue *calendar_queue_create(void);
void calendar_queue_free(calendar_queue *q);
void calendar_queue_push(calendar_queue *q, double time_s);
/* Removes and returns the earliest time; the queue must not be empty. */
double calendar_queue_pop(calendar_queue *q);
size_t calendar_queue_size(const calendar_queue *q);

#endif
