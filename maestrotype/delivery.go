package maestrotype

// MessageStatus is a messaging provider's word on where a message it
// accepted has got to, as Twilio reports it in MessageStatus. A send's
// receipt proves only that the provider accepted the message; whether it
// reached the handset is known later, from these.
type MessageStatus string

const (
	MessageAccepted    MessageStatus = "accepted"
	MessageScheduled   MessageStatus = "scheduled"
	MessageQueued      MessageStatus = "queued"
	MessageSending     MessageStatus = "sending"
	MessageSent        MessageStatus = "sent"
	MessageDelivered   MessageStatus = "delivered"
	MessageUndelivered MessageStatus = "undelivered"
	MessageFailed      MessageStatus = "failed"
	MessageCanceled    MessageStatus = "canceled"
	// MessageRead follows delivered on channels that report reads.
	MessageRead MessageStatus = "read"
)

// messageStatusRank orders the statuses along a message's life. Equal ranks
// are alternatives, never successors: queued does not follow accepted.
var messageStatusRank = map[MessageStatus]int{
	MessageAccepted:    1,
	MessageScheduled:   1,
	MessageQueued:      1,
	MessageSending:     2,
	MessageSent:        3,
	MessageDelivered:   4,
	MessageUndelivered: 4,
	MessageFailed:      4,
	MessageCanceled:    4,
	MessageRead:        5,
}

// Valid reports whether s is a status an outbound message can have.
func (s MessageStatus) Valid() bool {
	_, ok := messageStatusRank[s]
	return ok
}

// Final reports whether the provider will say nothing more that changes
// the outcome: the message was delivered (or read), or it never will be.
func (s MessageStatus) Final() bool {
	return messageStatusRank[s] >= messageStatusRank[MessageDelivered]
}

// Delivered reports whether the handset has the message.
func (s MessageStatus) Delivered() bool {
	return s == MessageDelivered || s == MessageRead
}

// Failed reports whether the message will never reach the handset.
func (s MessageStatus) Failed() bool {
	return s == MessageUndelivered || s == MessageFailed || s == MessageCanceled
}

// Supersedes reports whether s may replace cur as a message's status.
// Status callbacks arrive out of order and may repeat, so a status only
// ever moves forward, and a final one never changes, except that a
// delivered message may later be read. Any valid status supersedes none.
func (s MessageStatus) Supersedes(cur MessageStatus) bool {
	if !s.Valid() {
		return false
	}
	if cur == "" {
		return true
	}
	if cur.Final() {
		return cur == MessageDelivered && s == MessageRead
	}
	return messageStatusRank[s] > messageStatusRank[cur]
}
