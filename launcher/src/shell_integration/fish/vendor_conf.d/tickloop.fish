# Tickloop's shell integration for fish (docs/shells.md): OSC 133 marks
# around the prompt and each command (with the command line, as VS Code's
# OSC 633 E), and OSC 7 with the working directory, from fish's own events;
# the person's prompt and functions stay as they are (fish_prompt is only
# followed by an invisible mark).
#
# An agent's `run` gets no pager: just before the launcher types it, it
# writes a new number into agent-run, three folders up from this file;
# fish_preexec, on a number not seen yet, sets the variables below to `cat`
# (global, exported) for that command, and fish_postexec puts the person's
# back (a value the command set itself stays).
#
# fish reads this file because Tickloop put its folder first in
# XDG_DATA_DIRS; the person's XDG_DATA_DIRS is put back at once, so their
# child shells never see it.
if set -q TICKLOOP_XDG_DATA_DIRS
    set -gx XDG_DATA_DIRS $TICKLOOP_XDG_DATA_DIRS
    set -e TICKLOOP_XDG_DATA_DIRS
else
    set -e XDG_DATA_DIRS
end

if status is-interactive; and not set -q __tickloop_integrated
    set -g __tickloop_integrated 1
    set -g __tickloop_run_file (string replace -r -- '/fish/vendor_conf.d/[^/]*$' '' (status current-filename))/agent-run
    set -g __tickloop_run_seen ''
    set -g __tickloop_pagers @TICKLOOP_PAGERS@
    set -g __tickloop_restore

    function __tickloop_agent_run
        test -r $__tickloop_run_file; or return 0
        read -l n <$__tickloop_run_file; or return 0
        if test -z "$n"; or test "$n" = "$__tickloop_run_seen"
            return 0
        end
        set -g __tickloop_run_seen $n
        for name in $__tickloop_pagers
            if set -q -g -x $name
                set -g __tickloop_was_$name export $$name
            else if set -q -g $name
                set -g __tickloop_was_$name global $$name
            else
                set -g __tickloop_was_$name none
            end
            set -gx $name cat
            set -a __tickloop_restore $name
        end
    end

    function __tickloop_pagers_back
        for name in $__tickloop_restore
            set -l was __tickloop_was_$name
            if set -q -g $name; and test "$$name" = cat
                switch $$was[1][1]
                    case none
                        set -e -g $name
                    case export
                        set -gx $name $$was[1][2..-1]
                    case global
                        set -gu $name $$was[1][2..-1]
                end
            end
            set -e -g $was
        end
        set -g __tickloop_restore
    end

    # A command ended: its status.
    function __tickloop_postexec --on-event fish_postexec
        set -l s $status
        printf '\e]133;D;%s\a' $s
        __tickloop_pagers_back
    end

    # Before the prompt: the working directory, the prompt's start; and the
    # person's fish_prompt wrapped (again when it was defined anew) so that
    # an invisible mark follows it where the command line starts.
    function __tickloop_prompt --on-event fish_prompt
        printf '\e]7;file://%s%s\a\e]133;A\a' $hostname (string replace -a -- '%' '%25' $PWD)
        if functions -q fish_prompt; and not functions fish_prompt | string match -q '*__tickloop_person_prompt*'
            functions -e __tickloop_person_prompt
            functions -c fish_prompt __tickloop_person_prompt
            function fish_prompt
                __tickloop_person_prompt
                printf '\e]133;B\a'
            end
        end
    end

    # A command line was read and is about to run: its line, escaped as
    # VS Code's, then the output's start.
    function __tickloop_preexec --on-event fish_preexec
        __tickloop_agent_run
        set -l line (string replace -a -- '\\' '\\\\' $argv[1] | string collect)
        set line (string replace -a -- \n '\x0a' $line | string collect)
        set line (string replace -a -- ';' '\x3b' $line | string collect)
        set line (string replace -a -- \e '\x1b' $line | string collect)
        printf '\e]633;E;%s\a\e]133;C\a' "$line"
    end
end
