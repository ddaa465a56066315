package console

import (
	"fmt"
	"net/http"
)

// A state-changing form repeats in its body what its URL says: the ID of
// the object it acts on and the action. The URL alone is not trusted,
// because agents choose the IDs that end up in console URLs, and a URL a
// browser resolved differently from how the page meant it would otherwise
// carry an operator's click, with a valid CSRF token, to another object.
//
// The fields are not named "target" and "action": an input of that name
// would shadow the form's own target and action properties in the DOM.
const (
	// targetField holds the object's ID exactly as the path names it.
	targetField = "target_id"
	// actionField holds the route's action, such as "approve".
	actionField = "target_action"
)

// formTo is where a state-changing form posts and what its body repeats,
// built in one place so the URL and the hidden fields cannot disagree.
type formTo struct{ URL, Target, Action string }

func approvalForm(id, action string) formTo {
	return formTo{URL: approvalPath(id, action), Target: id, Action: action}
}

func sessionForm(id, action string) formTo {
	return formTo{URL: sessionPath(id, action), Target: id, Action: action}
}

func reconciliationForm(key, action string) formTo {
	return formTo{URL: reconciliationPath(key, action), Target: key, Action: action}
}

// bound admits a form post only if its body names the object the path
// names, compared exactly with the decoded path value, and this route's
// action; anything else is refused and nothing is done.
func (c *Console) bound(param, action string, next func(http.ResponseWriter, *http.Request, *visit)) func(http.ResponseWriter, *http.Request, *visit) {
	return func(w http.ResponseWriter, r *http.Request, v *visit) {
		if problem := boundProblem(r.PathValue(param), action, r.PostFormValue(targetField), r.PostFormValue(actionField)); problem != "" {
			c.cfg.Logger.Warn("console form refused: its body names another object or action than its address",
				"op", v.op.ID, "path", r.URL.EscapedPath(), "action", action)
			c.renderProblem(w, r, v, http.StatusBadRequest, problem+" Nothing was done. Open the object in the console and use the form on its own page.")
			return
		}
		next(w, r, v)
	}
}

// boundProblem says, naming the field and the rule, why a form's body does
// not match its address; "" when it does.
func boundProblem(pathID, pathAction, target, action string) string {
	switch {
	case target == "":
		return fmt.Sprintf("The form does not name the object it acts on: %q must repeat the ID in its address.", targetField)
	case target != pathID:
		return fmt.Sprintf("The form is for %q but was sent to the address of %q: %q must repeat the ID in its address.", target, pathID, targetField)
	case action == "":
		return fmt.Sprintf("The form does not name its action: %q must repeat the action in its address (%s).", actionField, pathAction)
	case action != pathAction:
		return fmt.Sprintf("The form's action is %q but its address's is %q: %q must repeat the action in its address.", action, pathAction, actionField)
	}
	return ""
}
