// Package tools loads the declarative catalog that says which tools exist,
// how each one is classified, how it is performed and what an agent may say
// about its outcome, together with the agents and operators allowed to use
// them and how the post-call workflow delivers what a call left to do. A
// catalog that breaks a rule refuses to load, naming every offending row
// and field, so a misclassified tool never reaches the router and a
// recorded intent never lacks a delivery.
package tools
