// Package tools loads the declarative catalog that says which tools exist,
// how each one is classified, how it is performed and what an agent may say
// about its outcome, together with the agents and operators allowed to use
// them. A catalog that breaks a rule refuses to load, naming every offending
// row and field, so a misclassified tool never reaches the router.
package tools
