// Package tools is maestro's tool catalog: it loads and validates the
// declarative file that says which tools exist and who may call them.
//
// For each tool the catalog says how it is classified, how it is performed
// and what an agent may say about its outcome; beside the tools it names
// the agents and operators allowed to use them and how the post-call
// workflow delivers what a call left to do. A catalog that breaks a rule
// refuses to load, naming every offending row and field, so a
// misclassified tool never reaches the router and a recorded intent never
// lacks a delivery.
package tools
