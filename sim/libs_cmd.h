/* libs_cmd: the simulator's commands for the libraries' drivers
 * (sim/play/libs.h), beside sim/main.c's for the stages:
 *
 *   sim run lib=NAME scenario=S [seed=K] [lease=MS]   one cell, told as a stage's run
 *   sim libs [jobs=N] [seed=K] [lease=MS]   every library's row beside its stage
 *
 * Each option also as "--name value". sim_libs_wanted says whether
 * argv is one of these; sim_libs_main runs it and returns the exit
 * status: 0 when every cell played matches the library's answer key. */
#ifndef SIM_LIBS_CMD_H
#define SIM_LIBS_CMD_H

int sim_libs_wanted(int argc, char **argv);
int sim_libs_main(int argc, char **argv);

#endif
