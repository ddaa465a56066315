-- Approvers see the effect class and the reversibility of the call they
-- decide, frozen with the request like its arguments, so a later catalog
-- change does not rewrite what the approver was shown. Requests from before
-- this migration were shown neither, which the empty default says.
ALTER TABLE approval_requests
    ADD COLUMN effect text NOT NULL DEFAULT '';
ALTER TABLE approval_requests
    ADD COLUMN reversibility text NOT NULL DEFAULT '';
